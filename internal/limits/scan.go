package limits

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// bodyShape is what the edge reads of a JSON request body without
// decoding it: how deep it nests, the largest "parts" array it holds and,
// for JSON-RPC, its top-level "method".
//
// Keys are matched as encoding/json matches them to struct fields — the
// decoders behind both faces — so "Parts", "METHOD" and "p\u0061rts"
// count as well: after unescaping, case-insensitively (Unicode simple
// folding, as bytes.EqualFold), the last occurrence winning for the
// method. The method is read from the first top-level value only, since
// the JSON-RPC servers decode one value from a stream and ignore the rest.
type bodyShape struct {
	depth    int
	maxParts int
	method   string
}

// frame is one open object or array during a scan.
type frame struct {
	array  bool
	parts  bool // an array under the key "parts"
	commas int
	empty  bool
}

var (
	keyMethod = []byte("method")
	keyParts  = []byte("parts")
)

// scanBody reads b's shape in one pass. It does not validate: a malformed
// body gets whatever shape its well-formed prefix has, and the face that
// decodes it answers the syntax error. It stops once the nesting passes
// depthCap, so a hostile body costs at most one linear pass.
func scanBody(b []byte, depthCap int) bodyShape {
	var sh bodyShape
	stack := make([]frame, 0, 16)
	partsKey := false // the value being read is a member named "parts"
	firstDone := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			start := i
			i = stringEnd(b, i)
			if j := skipSpace(b, i+1); j < len(b) && b[j] == ':' && len(stack) > 0 && !stack[len(stack)-1].array {
				key := unquote(b, start, i)
				partsKey = bytes.EqualFold(key, keyParts)
				if len(stack) == 1 && !firstDone && bytes.EqualFold(key, keyMethod) {
					if m, ok := stringValue(b, j+1); ok {
						sh.method = m
					}
				}
				continue
			}
			markValue(stack)
			firstDone = firstDone || len(stack) == 0
		case '{', '[':
			markValue(stack)
			stack = append(stack, frame{array: c == '[', parts: c == '[' && partsKey, empty: true})
			if sh.depth = max(sh.depth, len(stack)); sh.depth > depthCap {
				return sh
			}
			partsKey = false
		case '}', ']':
			if n := len(stack); n > 0 {
				if f := stack[n-1]; f.parts && !f.empty {
					sh.maxParts = max(sh.maxParts, f.commas+1)
				}
				stack = stack[:n-1]
				firstDone = firstDone || n == 1
			}
			partsKey = false
		case ',':
			partsKey = false
			if n := len(stack); n > 0 {
				stack[n-1].commas++
			}
		case ' ', '\t', '\r', '\n', ':':
		default:
			markValue(stack)
			firstDone = firstDone || len(stack) == 0
		}
	}
	return sh
}

// markValue notes that the innermost container holds a value.
func markValue(stack []frame) {
	if n := len(stack); n > 0 {
		stack[n-1].empty = false
	}
}

// stringEnd returns the index of the quote closing the string that opens
// at b[i] (len(b) when it is not closed).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// unquote returns the content of the string b[start:end+1] (quotes at
// both ends) as encoding/json reads it: escapes resolved, invalid UTF-8
// replaced by U+FFFD. Plain strings (no backslash, valid UTF-8) are
// returned in place; one that does not decode is nil, since the face
// refuses the body anyway.
func unquote(b []byte, start, end int) []byte {
	if end >= len(b) {
		return nil
	}
	s := b[start+1 : end]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return s
	}
	var out string
	if json.Unmarshal(b[start:end+1], &out) != nil {
		return nil
	}
	return []byte(out)
}

// stringValue returns the string value starting at or after b[i],
// unescaped; ok is false for anything else (null does not overwrite a
// string field in encoding/json, and other types fail its decoding).
func stringValue(b []byte, i int) (string, bool) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '"' {
		return "", false
	}
	end := stringEnd(b, i)
	s := unquote(b, i, end)
	if s == nil {
		return "", false
	}
	return string(s), true
}
