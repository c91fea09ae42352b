package memory

import (
	"encoding/json"
	"strings"
)

// textOf is what an item is searched by: with no fields, its whole value
// as JSON (as LangGraph indexes "$"); else each field's value (a dotted
// path into the value; strings as they are, anything else as JSON), one
// per line. A field the value lacks adds nothing.
func textOf(value map[string]any, fields []string) (string, error) {
	if len(fields) == 0 {
		b, err := json.Marshal(value)
		return string(b), err
	}
	var lines []string
	for i, f := range fields {
		if f == "" || f == "$" {
			if len(fields) > 1 {
				return "", badField("index", "\"$\" (the whole value) cannot be listed with other fields")
			}
			return textOf(value, nil)
		}
		v, ok := lookup(value, strings.Split(f, "."))
		if !ok {
			continue
		}
		if s, isString := v.(string); isString {
			lines = append(lines, s)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", badField("index", "field %d (%q): %v", i, f, err)
		}
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n"), nil
}

// lookup follows path through nested objects.
func lookup(v any, path []string) (any, bool) {
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = o[p]; !ok {
			return nil, false
		}
	}
	return v, true
}
