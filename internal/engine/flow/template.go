package flow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"text/template"
)

// funcs are the template functions Trellis documents besides Go's own.
var funcs = template.FuncMap{
	"default":  defaultValue,
	"coalesce": coalesce,
	"toJson":   toJSON,
}

// defaultValue returns v unless it is zero (missing, "", 0, false, empty),
// else def: {{ default "friend" .nickname }}.
func defaultValue(def any, v ...any) any {
	if len(v) == 0 || isZero(v[0]) {
		return def
	}
	return v[0]
}

// coalesce returns the first non-zero value, or nil.
func coalesce(vs ...any) any {
	for _, v := range vs {
		if !isZero(v) {
			return v
		}
	}
	return nil
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func isZero(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.String:
		return rv.Len() == 0
	}
	return rv.IsZero()
}

// text is a compiled template; a string without "{{" renders as itself.
type text struct {
	src  string
	tmpl *template.Template
}

// compileText parses src as a text/template with the flow functions.
func compileText(name, src string) (*text, error) {
	if !strings.Contains(src, "{{") {
		return &text{src: src}, nil
	}
	t, err := template.New(name).Funcs(funcs).Parse(src)
	if err != nil {
		return nil, fmt.Errorf("template: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	return &text{src: src, tmpl: t}, nil
}

// render executes the template over data. A missing key renders as
// "<no value>", as text/template does for maps (Trellis documents it).
func (t *text) render(data map[string]any) (string, error) {
	if t.tmpl == nil {
		return t.src, nil
	}
	var b strings.Builder
	if err := t.tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("template: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	return b.String(), nil
}

// compileArgs compiles a tool call's arguments: every string becomes a
// *text, the shape (maps, lists, scalars) stays as written.
func compileArgs(name string, v any) (any, error) {
	switch a := v.(type) {
	case string:
		return compileText(name, a)
	case map[string]any:
		out := make(map[string]any, len(a))
		for k, e := range a {
			c, err := compileArgs(name+"."+k, e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(a))
		for i, e := range a {
			c, err := compileArgs(fmt.Sprintf("%s[%d]", name, i), e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// renderArgs renders the compiled arguments c over data.
func renderArgs(c any, data map[string]any) (any, error) {
	switch a := c.(type) {
	case *text:
		return a.render(data)
	case map[string]any:
		out := make(map[string]any, len(a))
		for k, e := range a {
			r, err := renderArgs(e, data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(a))
		for i, e := range a {
			r, err := renderArgs(e, data)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = r
		}
		return out, nil
	}
	return c, nil
}
