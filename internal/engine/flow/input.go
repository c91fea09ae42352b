package flow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The input types of the node syntax.
const (
	InputText    = "text"
	InputConfirm = "confirm"
	InputChoice  = "choice"
	InputInt     = "int"
)

// inputTypes lists them, for errors.
var inputTypes = []string{InputText, InputConfirm, InputChoice, InputInt}

// The canonical answers of a confirm input.
const (
	confirmYes = "yes"
	confirmNo  = "no"
)

// input is what an input node accepts, compiled from its keys.
type input struct {
	kind     string
	options  []string // choice answers, as written
	def      string   // input_default; "" means none
	hasDef   bool
	fallback bool // the node routes an answer no option or condition claims
}

// answerError is an answer the input refuses; the node asks again with it.
type answerError struct{ reason string }

func (e *answerError) Error() string { return e.reason }

func refuse(format string, args ...any) error {
	return &answerError{reason: fmt.Sprintf(format, args...)}
}

// accept validates a raw answer and returns the value saved and routed
// on: for confirm "yes" or "no", for choice the option as written, for
// int an int64, for text the text. An empty answer takes input_default;
// a confirm without one defaults to yes (the Unix convention).
func (in input) accept(raw string) (any, error) {
	ans := strings.TrimSpace(raw)
	if ans == "" && in.hasDef {
		ans = in.def
	}
	switch in.kind {
	case InputConfirm:
		if ans == "" {
			return confirmYes, nil
		}
		return normaliseConfirm(ans)
	case InputChoice:
		return in.choose(ans)
	case InputInt:
		n, err := strconv.ParseInt(ans, 10, 64)
		if err != nil {
			return nil, refuse("%q is not a whole number", ans)
		}
		return n, nil
	}
	return ans, nil
}

// normaliseConfirm maps y, yes, true, 1 to "yes" and n, no, false, 0 to
// "no", ignoring case; anything else is refused.
func normaliseConfirm(ans string) (string, error) {
	switch strings.ToLower(ans) {
	case "y", "yes", "true", "1":
		return confirmYes, nil
	case "n", "no", "false", "0":
		return confirmNo, nil
	}
	return "", refuse("%q is not yes or no (y, yes, true, 1 / n, no, false, 0)", ans)
}

// choose matches ans against the options: exactly, then ignoring case,
// then as a 1-based option number. An empty answer is accepted only when
// the node has a fallback route for it.
func (in input) choose(ans string) (string, error) {
	if ans == "" {
		if in.fallback {
			return "", nil
		}
		return "", refuse("please choose one of %s", quoteList(in.options))
	}
	if slices.Contains(in.options, ans) {
		return ans, nil
	}
	for _, o := range in.options {
		if strings.EqualFold(o, ans) {
			return o, nil
		}
	}
	if n, err := strconv.Atoi(ans); err == nil && n >= 1 && n <= len(in.options) {
		return in.options[n-1], nil
	}
	if in.fallback {
		return ans, nil
	}
	return "", refuse("%q is not one of %s", ans, quoteList(in.options))
}

func quoteList(opts []string) string {
	q := make([]string, len(opts))
	for i, o := range opts {
		q[i] = strconv.Quote(o)
	}
	return strings.Join(q, ", ")
}

// schema is the JSON Schema of the answer, for hosts that render a form.
func (in input) schema() map[string]any {
	switch in.kind {
	case InputConfirm:
		return map[string]any{"type": "string", "enum": []string{confirmYes, confirmNo}}
	case InputChoice:
		return map[string]any{"type": "string", "enum": in.options}
	case InputInt:
		return map[string]any{"type": "integer"}
	}
	return map[string]any{"type": "string"}
}
