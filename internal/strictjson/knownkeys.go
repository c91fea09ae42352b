package strictjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"unicode/utf8"
)

// maxScanDepth bounds knownKeys' recursion; deeper documents take the
// exact path.
const maxScanDepth = 512

// The interfaces of types that decode themselves.
var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// knownKeys reports whether Decode may decode doc into a value of type t
// in one pass, because the exact path would accept it whenever
// json.Unmarshal does: doc is one value with nothing after it, no object
// names a member twice and every string is Unicode text (see checkText),
// every member name walkKeys would check is one of its struct's names,
// spelt exactly (encoding/json matches names case-insensitively;
// strictjson does not), and every struct type met is plain, so
// encoding/json knows the same names. It answers false whenever it is
// unsure — an escaped name, a non-ASCII struct member name, a number with
// an exponent or of hundreds of digits (which may not fit the float64 of
// the exact path's generic parse), deep nesting, or text that is not
// JSON. It reads doc without allocating unless an object has more than
// eight members (see memberSet).
//
// flat reports that doc is moreover an object of strings only, each
// written as its text (no escapes, valid UTF-8) and for a field that
// takes it as written (structInfo.flat), of the struct t points to: then
// setFlat can decode doc without encoding/json.
func knownKeys(doc []byte, t reflect.Type) (ok, flat bool) {
	s := keyScanner{b: doc, flat: t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct}
	if !s.value(t, 0) {
		return false, false
	}
	s.space()
	return s.i == len(s.b), s.flat
}

// keyScanner walks JSON text; i is the next byte to read. flat stays true
// while the top-level object is flat (see knownKeys).
type keyScanner struct {
	b    []byte
	i    int
	flat bool
}

func (s *keyScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value that decodes into t; a nil t checks no names.
func (s *keyScanner) value(t reflect.Type, depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(t, depth)
	case depth == 0:
		s.flat = false
	}
	switch c := s.b[s.i]; {
	case c == '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return s.array(elem, depth)
	case c == '"':
		_, _, ok := s.text()
		return ok
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return s.literal("true") || s.literal("false") || s.literal("null")
}

// object scans an object that decodes into t, checking its names the way
// walkKeys does: a struct's against its fields, a map's not at all (its
// values against the map's element type), and none below a struct that
// decodes itself or a type that is neither.
func (s *keyScanner) object(t reflect.Type, depth int) bool {
	var info *structInfo
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Map:
			elem = t.Elem()
		case reflect.Struct:
			if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
				break
			}
			if info = structFields(t); !info.plain {
				return false
			}
		}
	}
	if depth == 0 && info == nil {
		s.flat = false
	}
	s.i++ // '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	var seen memberSet
	for {
		s.space()
		name, form, ok := s.text()
		if !ok || form == escapedText || !seen.add(s.b, s.i-len(name)-1, s.i-1) {
			return false
		}
		vt := elem
		if info != nil {
			ft, known := info.fields[string(name)]
			if !known || form == rawText {
				return false
			}
			vt = ft
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if depth == 0 && s.flat {
			s.flat = info.flat[string(name)] != nil && s.textNext()
		}
		if !s.value(vt, depth+1) {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array scans an array whose elements decode into elem.
func (s *keyScanner) array(elem reflect.Type, depth int) bool {
	s.i++ // '['
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(elem, depth+1) {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// stringForm says how a JSON string's raw content relates to its text.
type stringForm int

const (
	// asciiText is printable ASCII without escapes: the text itself.
	asciiText stringForm = iota
	// rawText has no escapes or control characters but other bytes: the
	// text itself if it is valid UTF-8 (else encoding/json replaces the
	// invalid bytes).
	rawText
	// escapedText has escapes (or control characters, which JSON does
	// not allow).
	escapedText
)

// str scans a string and returns its raw content and form.
func (s *keyScanner) str() (raw []byte, form stringForm, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, 0, false
	}
	start := s.i + 1
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], form, true
		case c == '\\':
			form = escapedText
			i++ // the escaped byte cannot end the string
		case c < 0x20:
			form = escapedText
		case c >= 0x80:
			form = max(form, rawText)
		}
	}
	return nil, 0, false
}

// text scans a string as str does, refusing one that is not Unicode text
// (see textProblem).
func (s *keyScanner) text() (raw []byte, form stringForm, ok bool) {
	raw, form, ok = s.str()
	return raw, form, ok && (form == asciiText || textProblem(raw) == "")
}

// textNext reports whether the next value is a string written as its
// text.
func (s *keyScanner) textNext() bool {
	peek := keyScanner{b: s.b, i: s.i}
	peek.space()
	raw, form, ok := peek.str()
	return ok && (form == asciiText || form == rawText && utf8.Valid(raw))
}

// number scans a number, refusing one that might not fit a float64: any
// with an exponent, and any of more than 300 characters.
func (s *keyScanner) number() bool {
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case '0' <= c && c <= '9', c == '-', c == '.':
			s.i++
		case c == 'e', c == 'E':
			return false
		default:
			return s.i-start <= 300
		}
	}
	return s.i-start <= 300
}

// literal scans word if it is next.
func (s *keyScanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// setFlat stores the members of a flat document (see knownKeys) into the
// struct v points to, as json.Unmarshal would: in order, each string's
// text into its field, leaving other fields as they are. It reports
// false, having stored nothing, if v is a nil pointer.
func setFlat(doc []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.IsNil() {
		return false
	}
	rv = rv.Elem()
	info := structFields(rv.Type())
	s := keyScanner{b: doc}
	s.space()
	s.i++ // '{'
	for {
		s.space()
		if s.b[s.i] == '}' {
			return true
		}
		name, _, _ := s.str()
		s.space()
		s.i++ // ':'
		s.space()
		text, _, _ := s.str()
		rv.FieldByIndex(info.flat[string(name)]).SetString(string(text))
		s.space()
		if s.b[s.i] == ',' {
			s.i++
		}
	}
}
