package jsonfast

import (
	"encoding/json"
	"unicode/utf8"
)

// AppendString appends s as a JSON string, exactly as encoding/json writes
// it (HTML-safe escaping included): plain strings, most of them, as they
// are, the rest through encoding/json.
func AppendString(b []byte, s string) []byte {
	if !Plain(s) {
		q, _ := json.Marshal(s) // a string always encodes
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Plain reports whether s is written as it is inside a JSON string by
// encoding/json: printable ASCII other than '"', '\\', '<', '>' and '&'.
func Plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// AppendObject appends prefix, s as a JSON string and the closing '}':
// the object encoding/json writes for a struct whose members before the
// last are the constant prefix (e.g. `{"type":"token","content":`).
func AppendObject(b []byte, prefix, s string) []byte {
	b = append(b, prefix...)
	b = AppendString(b, s)
	return append(b, '}')
}

// StringAfter returns the JSON string literal that makes up the rest of
// obj after prefix: obj must be exactly prefix, one string literal of
// valid UTF-8 that is not empty ("" is refused), and the closing '}' — as
// AppendObject writes it. The literal is returned still encoded, capped so
// that appending to it copies. ok is false for anything else (other
// members, other spacing, an invalid literal): decode those with
// encoding/json. A literal may escape otherwise than encoding/json would
// ("<" for "\u003c"); it means the same.
func StringAfter(obj []byte, prefix string) (lit []byte, ok bool) {
	if len(obj) < len(prefix)+3 || string(obj[:len(prefix)]) != prefix || obj[len(obj)-1] != '}' {
		return nil, false
	}
	lit = obj[len(prefix) : len(obj)-1]
	if len(lit) <= 2 || !validString(lit) {
		return nil, false
	}
	return lit[:len(lit):len(lit)], true
}

// validString reports whether b is exactly one JSON string literal of
// valid UTF-8, which encoding/json decodes without replacing bytes. It
// allows no control character, so an event that carries it stays on one
// SSE data line.
func validString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	in := b[1 : len(b)-1]
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case c < 0x20 || c == '"':
			return false
		case c == '\\':
			i++
			if i == len(in) {
				return false
			}
			switch in[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(in) || !isHex(in[i+1]) || !isHex(in[i+2]) || !isHex(in[i+3]) || !isHex(in[i+4]) {
					return false
				}
				i += 4
			default:
				return false
			}
		}
	}
	return utf8.Valid(in)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
