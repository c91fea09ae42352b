package runlog

import (
	"bytes"
	"unicode/utf8"
)

// TokenLiterals reads a token's delta event as the log writes it —
// `{…,"actor":"…","text":"…"}`, actor and text its last two members — and
// returns the two string members still encoded (JSON string literals,
// capped so that appending to them copies). A face splices the text into
// its own frame instead of decoding and encoding it again: the hot path of
// every stream. ok is false for any other shape; decode those with
// encoding/json.
//
// Like everything the log reads and writes by hand, it is fuzzed against
// encoding/json (token_test.go). A string literal holds no unescaped '"',
// so the last `,"text":"` of the body starts the text unless a literal
// before it was broken, which checking each literal rules out.
func TokenLiterals(body []byte) (actor, text []byte, ok bool) {
	const textKey, actorKey = `,"text":`, `,"actor":"`
	i := bytes.LastIndex(body, []byte(textKey+`"`))
	if i < 0 || body[len(body)-1] != '}' {
		return nil, nil, false
	}
	text = body[i+len(textKey) : len(body)-1]
	if len(text) <= 2 || !validString(text) {
		return nil, nil, false
	}
	j := bytes.LastIndex(body[:i], []byte(actorKey))
	if j < 0 {
		return nil, nil, false
	}
	actor = body[j+len(actorKey)-1 : i]
	if len(actor) <= 2 || !validString(actor) {
		return nil, nil, false
	}
	return actor[:len(actor):len(actor)], text[:len(text):len(text)], true
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
			if i == len(in) || !validEscape(in[i:]) {
				return false
			}
			if in[i] == 'u' {
				i += 4
			}
		}
	}
	return utf8.Valid(in)
}

// validEscape reports whether e, what follows a backslash, starts with a
// JSON escape.
func validEscape(e []byte) bool {
	switch e[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		return len(e) > 4 && isHex(e[1]) && isHex(e[2]) && isHex(e[3]) && isHex(e[4])
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
