package strictjson

import (
	"encoding/json"
	"reflect"
)

// maxScanDepth bounds knownKeys' recursion; deeper documents take the
// exact path.
const maxScanDepth = 512

// unmarshalerType is json.Unmarshaler's type.
var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// knownKeys reports whether Decode may decode doc into a value of type t
// in one pass, because the exact path would accept it whenever
// json.Unmarshal does: doc is one value with nothing after it, every
// member name walkKeys would check is one of its struct's names, spelt
// exactly (encoding/json matches names case-insensitively; strictjson
// does not), and every struct type met is plain, so encoding/json knows
// the same names. It answers false whenever it is unsure — an escaped or
// non-ASCII name, a number with an exponent or of hundreds of digits
// (which may not fit the float64 of the exact path's generic parse), deep
// nesting, or text that is not JSON. It reads doc without allocating.
func knownKeys(doc []byte, t reflect.Type) bool {
	s := keyScanner{b: doc}
	if !s.value(t, 0) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// keyScanner walks JSON text; i is the next byte to read.
type keyScanner struct {
	b []byte
	i int
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
	case c == '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return s.array(elem, depth)
	case c == '"':
		_, _, ok := s.str()
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
	var fields map[string]reflect.Type
	var elem reflect.Type
	checked := false
	if t != nil {
		switch t.Kind() {
		case reflect.Map:
			elem = t.Elem()
		case reflect.Struct:
			if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
				break
			}
			info := structFields(t)
			if !info.plain {
				return false
			}
			fields, checked = info.fields, true
		}
	}
	s.i++ // '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.space()
		name, simple, ok := s.str()
		if !ok {
			return false
		}
		vt := elem
		if checked {
			ft, known := fields[string(name)]
			if !known || !simple {
				return false
			}
			vt = ft
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
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

// str scans a string and returns its raw content; simple reports that the
// content is printable ASCII without escapes, so it is the string itself.
func (s *keyScanner) str() (raw []byte, simple, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	simple = true
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], simple, true
		case c == '\\':
			simple = false
			i++ // the escaped byte cannot end the string
		case c < 0x20 || c >= 0x80:
			simple = false
		}
	}
	return nil, false, false
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
