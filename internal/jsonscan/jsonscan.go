package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Valid reports whether b is one valid JSON value, as json.Valid does.
// Like json.Valid it does not check UTF-8 inside strings.
func Valid(b []byte) bool {
	s := scanner{}
	i, ok := s.value(b, s.space(b, 0), 0)
	return ok && s.space(b, i) == len(b)
}

// Compact reports whether b is exactly what json.Marshal makes of
// json.RawMessage(b): one valid JSON value without insignificant
// whitespace, with <, > and & (and U+2028, U+2029) escaped as \u escapes.
func Compact(b []byte) bool {
	s := scanner{compact: true}
	i, ok := s.value(b, 0, 0)
	return ok && i == len(b)
}

// maxDepth bounds nesting as encoding/json does (10000), so that a hostile
// value cannot exhaust the stack.
const maxDepth = 10000

// scanner walks one value. In compact mode whitespace between tokens, and
// the bytes json.Marshal would escape inside strings, are refused.
type scanner struct {
	compact bool
}

func (s scanner) space(b []byte, i int) int {
	if s.compact {
		return i
	}
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// value returns the index after the value starting at b[i].
func (s scanner) value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		return s.members(b, i+1, '}', depth+1)
	case c == '[':
		return s.members(b, i+1, ']', depth+1)
	case c == '"':
		return s.str(b, i+1)
	case c == '-' || '0' <= c && c <= '9':
		return number(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// members returns the index after the members of an object (closing '}':
// "key":value pairs) or the elements of an array (closing ']') whose
// opening bracket is at b[i-1].
func (s scanner) members(b []byte, i int, closing byte, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = s.space(b, i)
	if i < len(b) && b[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if closing == '}' {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = s.str(b, i+1); !ok {
				return i, false
			}
			i = s.space(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = s.space(b, i+1)
		}
		if i, ok = s.value(b, i, depth); !ok {
			return i, false
		}
		i = s.space(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = s.space(b, i+1)
		case closing:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// str returns the index after the string whose opening quote is at
// b[i-1]. It passes over plain bytes eight at a time.
func (s scanner) str(b []byte, i int) (int, bool) {
	for i < len(b) {
		if len(b)-i >= 8 {
			m := s.stopBytes(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // the first special byte
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, false
				}
				i += 5
			default:
				return i, false
			}
		case s.compact && (c == '<' || c == '>' || c == '&'):
			return i, false
		case s.compact && c == 0xE2 && len(b)-i >= 3 && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			return i, false // U+2028 or U+2029
		default:
			i++
		}
	}
	return i, false
}

// Word-at-a-time ("SWAR") byte tests: ones has 1 in every byte, highs the
// high bit of every byte.
const ones, highs = 0x0101010101010101, 0x8080808080808080

// stopBytes returns the high bits of the bytes of w that str must look at:
// a quote, a backslash or a control character, and in compact mode also
// <, >, & and 0xE2 (the lead byte of U+2028 and U+2029). It computes on
// the low seven bits of each byte, where adding at most 0x80 cannot carry
// into the next byte, so that every bit is exact: a byte is ASCII and x >=
// 0x20, or x is not c, when its sum has the high bit.
func (s scanner) stopBytes(w uint64) uint64 {
	x := w &^ highs
	ok := (x + ones*(0x80-0x20)) & ((x ^ ones*'\\') + ones*0x7f) // not control, not '\\'
	if !s.compact {
		ok &= (x ^ ones*'"') + ones*0x7f
		return ^ok &^ w & highs // of the ASCII bytes
	}
	ok &= ((x | ones*4) ^ ones*'&') + ones*0x7f      // neither '"' (0x22) nor '&' (0x26)
	ok &= ((x &^ (ones * 2)) ^ ones*'<') + ones*0x7f // neither '<' (0x3c) nor '>' (0x3e)
	e2 := ^((x ^ ones*(0xE2&0x7f)) + ones*0x7f) & w  // 0xE2
	return (^ok&^w | e2) & highs
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number returns the index after the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
