package memory

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"agentd/internal/errdefs"
)

// The bounds of what is stored: a namespace of at most MaxDepth labels of
// at most MaxLabelBytes each, a key of at most MaxKeyBytes.
const (
	MaxDepth      = 16
	MaxLabelBytes = 256
	MaxKeyBytes   = 1024
	maxLimit      = 1000
)

// badField is a Validation error about the request member field.
func badField(field, format string, args ...any) error {
	return errdefs.WithField(field, errdefs.Validationf(format, args...))
}

// checkNamespace checks the labels of a namespace named by field
// ("namespace", "namespace_prefix" …); required says whether it may be
// empty. A label is never empty and holds no "." (the Agent Protocol
// joins labels with dots in query strings), no control character and
// valid UTF-8.
func checkNamespace(field string, ns []string, required bool) error {
	if required && len(ns) == 0 {
		return badField(field, "required: a namespace is a non-empty list of labels, e.g. [\"memories\", \"ann\"]")
	}
	if len(ns) > MaxDepth {
		return badField(field, "%d labels; at most %d", len(ns), MaxDepth)
	}
	for i, label := range ns {
		if err := checkLabel(label); err != nil {
			return errdefs.WithField(fmt.Sprintf("%s[%d]", field, i), err)
		}
	}
	return nil
}

func checkLabel(label string) error {
	switch {
	case label == "":
		return errdefs.Validationf("a namespace label must not be empty")
	case len(label) > MaxLabelBytes:
		return errdefs.Validationf("label of %d bytes; at most %d", len(label), MaxLabelBytes)
	case strings.Contains(label, "."):
		return errdefs.Validationf("label %q holds a \".\"; labels cannot contain periods", label)
	case !utf8.ValidString(label) || strings.IndexFunc(label, isControl) >= 0:
		return errdefs.Validationf("label %q holds a control character or invalid UTF-8", label)
	}
	return nil
}

func checkKey(key string) error {
	switch {
	case key == "":
		return badField("key", "required")
	case len(key) > MaxKeyBytes:
		return badField("key", "%d bytes; at most %d", len(key), MaxKeyBytes)
	case !utf8.ValidString(key) || strings.IndexFunc(key, isControl) >= 0:
		return badField("key", "%q holds a control character or invalid UTF-8", key)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkPage checks an offset and a limit (0: the default).
func checkPage(offset, limit int) error {
	if offset < 0 {
		return badField("offset", "%d must not be negative", offset)
	}
	if limit < 0 || limit > maxLimit {
		return badField("limit", "%d must be between 1 and %d", limit, maxLimit)
	}
	return nil
}

// plainJSON returns v as encoding/json decodes it into an any (float64
// numbers, not json.Number), so that both stores compare it alike; field
// names the member in the error.
func plainJSON(field string, v map[string]any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, badField(field, "not JSON: %v", err)
	}
	if strings.Contains(string(b), `\u0000`) {
		return nil, badField(field, "holds a NUL character, which cannot be stored")
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, badField(field, "not JSON: %v", err)
	}
	return out, nil
}

// SplitNamespace reads a namespace joined with dots (the Agent Protocol's
// query strings); empty is the empty namespace.
func SplitNamespace(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// ParseIndex reads a put's index member: absent or null (the default
// fields), false (searchable by no query), or a list of fields.
func ParseIndex(raw json.RawMessage) (fields []string, none bool, err error) {
	s := strings.TrimSpace(string(raw))
	switch s {
	case "", "null", "true":
		return nil, false, nil
	case "false":
		return nil, true, nil
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, false, badField("index", "want false or a list of field paths, got %.100s", s)
	}
	for i, f := range fields {
		if f == "" {
			return nil, false, badField(fmt.Sprintf("index[%d]", i), "a field path must not be empty")
		}
	}
	return fields, false, nil
}
