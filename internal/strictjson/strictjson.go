package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// PathError is a mistake at one place of a document.
type PathError struct {
	// Path locates the member ("" for the document itself).
	Path string
	Msg  string
}

// Error reads "path: message", or the message alone at the top level.
func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Decode decodes doc into v (a pointer to a struct), rejecting unknown
// members, duplicate members, strings that are not Unicode text and
// trailing data. Mistakes are *PathError values naming the
// member at fault; malformed JSON is reported with its line and column.
//
// A document whose member names are all known, spelt exactly, is decoded
// in one pass (see knownKeys), and one of plain strings only without
// encoding/json (see setFlat); any other document, and any document that
// pass fails on, takes the exact path that finds and names the mistake.
func Decode(doc []byte, v any) error {
	if t := reflect.TypeOf(v); t != nil {
		ok, flat := knownKeys(doc, t)
		if ok && flat && setFlat(doc, v) {
			return nil
		}
		if ok && json.Unmarshal(doc, v) == nil {
			return nil
		}
	}
	return decodeExact(doc, v)
}

// decodeExact is Decode without the one-pass shortcut: it parses doc into
// generic values to check every member name against v's type, then
// decodes strictly.
func decodeExact(doc []byte, v any) error {
	var generic any
	if err := json.Unmarshal(doc, &generic); err != nil {
		return syntaxError(doc, err)
	}
	if err := checkText(doc); err != nil {
		return err
	}
	if err := walkKeys("", generic, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return &PathError{Msg: fmt.Sprintf("expected %s, got a JSON %s", kindName(te.Type), te.Value)}
			}
			return &PathError{Path: te.Field, Msg: fmt.Sprintf("expected %s, got a JSON %s", kindName(te.Type), te.Value)}
		}
		return &PathError{Msg: err.Error()}
	}
	if dec.More() {
		return &PathError{Msg: "unexpected data after the JSON object"}
	}
	return nil
}

// kindName describes a Go type the way a JSON author thinks of it.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.String()
}

func syntaxError(doc []byte, err error) error {
	if strings.Contains(err.Error(), "after top-level value") {
		return &PathError{Msg: "unexpected data after the JSON object"}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input") {
		return &PathError{Msg: "malformed JSON: unexpected end of input"}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(doc, se.Offset-1) // Offset counts the offending byte
		return &PathError{Msg: fmt.Sprintf("malformed JSON at line %d, column %d: %v", line, col, se)}
	}
	return &PathError{Msg: "malformed JSON: " + err.Error()}
}

func position(b []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func walkKeys(path string, v any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch val := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Map:
			for _, k := range sortedKeys(val) {
				if err := walkKeys(join(path, k), val[k], t.Elem()); err != nil {
					return err
				}
			}
		case reflect.Struct:
			if t.Implements(reflect.TypeFor[json.Unmarshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
				return nil
			}
			fields := jsonFields(t)
			for _, k := range sortedKeys(val) {
				ft, ok := fields[k]
				if !ok {
					return &PathError{Path: join(path, k), Msg: "unknown field" + suggest(k, fields)}
				}
				if err := walkKeys(join(path, k), val[k], ft); err != nil {
					return err
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range val {
				if err := walkKeys(fmt.Sprintf("%s[%d]", path, i), e, t.Elem()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// structInfo is what strictjson knows of a struct type's members.
type structInfo struct {
	// fields maps the JSON member names (with embedded structs' promoted)
	// to their types.
	fields map[string]reflect.Type
	// plain reports that encoding/json knows exactly these names for the
	// type: no name is declared twice, every embedded field is an
	// exported, untagged, plain struct, and every tag name is one
	// encoding/json takes as written. knownKeys trusts only plain types.
	plain bool
	// flat maps the names of the string fields that take a JSON string
	// as it is written (no ",string" option, not a json.Number, no
	// UnmarshalJSON or UnmarshalText) to their reflect field indexes.
	flat map[string][]int
}

// fieldCache holds structFields' answers: a type's fields never change.
var fieldCache sync.Map // reflect.Type → *structInfo

// jsonFields maps the JSON member names of struct type t (with embedded
// structs' promoted) to their types. Callers must not modify the map.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	return structFields(t).fields
}

// structFields returns what strictjson knows of struct type t.
func structFields(t reflect.Type) *structInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(*structInfo)
	}
	m := computeFields(t)
	fieldCache.Store(t, m)
	return m
}

// computeFields is structFields without the cache.
func computeFields(t reflect.Type) *structInfo {
	out := &structInfo{fields: map[string]reflect.Type{}, plain: true, flat: map[string][]int{}}
	add := func(name string, ft reflect.Type) {
		if _, dup := out.fields[name]; dup {
			out.plain = false
		}
		out.fields[name] = ft
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && (name != "" || !f.IsExported() || f.Type.Kind() != reflect.Struct) {
			out.plain = false // encoding/json may see other names here
		}
		if (name == "-" && tag != "-") || (name != "" && !plainTagName(name)) {
			out.plain = false
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			inner := structFields(f.Type)
			out.plain = out.plain && inner.plain
			for k, v := range inner.fields {
				add(k, v)
			}
			for k, index := range inner.flat {
				out.flat[k] = append([]int{i}, index...)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		add(name, f.Type)
		if takesStringAsWritten(f) {
			out.flat[name] = []int{i}
		}
	}
	return out
}

// takesStringAsWritten reports whether encoding/json stores a JSON string
// into field f as the string's text.
func takesStringAsWritten(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == "string" {
			return false
		}
	}
	t := f.Type
	return t.Kind() == reflect.String && t != reflect.TypeFor[json.Number]() &&
		!t.Implements(unmarshalerType) && !reflect.PointerTo(t).Implements(unmarshalerType) &&
		!t.Implements(textUnmarshalerType) && !reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// plainTagName reports whether encoding/json surely takes a tag name as
// written (it ignores names with some punctuation or spaces).
func plainTagName(name string) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '_', c == '-', c == '.', c == '/', c == ':', c == '@', c == '$':
		default:
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest names the known key nearest to k: one that differs only in
// case (which encoding/json would have taken for it), else the nearest
// within edit distance 2.
func suggest(k string, fields map[string]reflect.Type) string {
	best, bestD := "", 3
	for name := range fields {
		d := Distance(k, name)
		if strings.EqualFold(k, name) {
			d = -1
		}
		if d < bestD || (d == bestD && name < best) {
			best, bestD = name, d
		}
	}
	switch {
	case best == "":
		return ""
	case bestD < 0:
		return fmt.Sprintf(" (did you mean %q? names are case-sensitive)", best)
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Distance is the Levenshtein distance of a and b (in bytes): how
// "did you mean" hints, here and in other document checkers, pick the
// nearest known name.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
