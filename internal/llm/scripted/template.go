package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"time"
)

// Data is what rule templates see.
//
// Functions available besides text/template's builtins: json (encode a
// value as JSON, e.g. to quote user text inside tool arguments), trim,
// upper, lower.
type Data struct {
	// Text is the last user message, trimmed.
	Text string
	// Groups are the rule's regexp submatches; Groups[0] is the whole
	// match. Empty for rules without Match.
	Groups []string
	// Named holds the named groups ((?P<name>…)) of the match.
	Named map[string]string
	// Tool and ToolResult are the name and content of the tool result that
	// ends the conversation, for rules with AfterTool.
	Tool       string
	ToolResult string
	// Turn counts the assistant messages already in the conversation.
	Turn int
	// Metadata is the request's metadata.
	Metadata map[string]string
	// Model is the model the request names, and System the text of its
	// first system message (the agent's system prompt): what an
	// assistant may override shows in a reply that quotes them.
	Model  string
	System string
}

func funcs() template.FuncMap {
	return template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"trim":  strings.TrimSpace,
		"upper": strings.ToUpper,
		"lower": strings.ToLower,
	}
}

// tmpl is a configuration string that may be a template. Strings without
// "{{" are kept literal so the common case renders without executing
// anything. Templates made only of text and simple substitutions
// ({{.Text}}, {{index .Groups 1}}, …) also render without text/template:
// see fastTemplate.
type tmpl struct {
	path string
	lit  string
	t    *template.Template
	fast fastTemplate // used when set; t is then the fallback for errors
}

func parseTemplate(path, src string) (tmpl, error) {
	if !strings.Contains(src, "{{") {
		return tmpl{path: path, lit: src}, nil
	}
	t, err := template.New(path).Funcs(funcs()).Option("missingkey=error").Parse(src)
	if err != nil {
		return tmpl{}, fmt.Errorf("%s: %w", path, err)
	}
	return tmpl{path: path, t: t, fast: compileFast(t)}, nil
}

func (t tmpl) render(d Data) (string, error) {
	if t.t == nil {
		return t.lit, nil
	}
	if s, ok := t.fast.render(d); ok {
		return s, nil
	}
	var b strings.Builder
	if err := t.t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("%s: %w", t.path, err)
	}
	return b.String(), nil
}

// usesMatch reports whether rendering may read Data.Groups or Data.Named,
// so that rules whose templates never do can match without collecting
// submatches.
func (t tmpl) usesMatch() bool {
	if t.t == nil {
		return false
	}
	if t.fast.segs == nil {
		return true
	}
	for _, s := range t.fast.segs {
		if s.field == fieldGroup {
			return true
		}
	}
	return false
}

// duration renders a delay; empty means none.
func (t tmpl) duration(d Data) (time.Duration, error) {
	s, err := t.render(d)
	if err != nil {
		return 0, err
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration like 20ms", t.path, s)
	}
	if v < 0 || v > maxDelay {
		return 0, fmt.Errorf("%s: %s is outside 0…%s", t.path, v, maxDelay)
	}
	return v, nil
}
