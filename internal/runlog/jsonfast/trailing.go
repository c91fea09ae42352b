package jsonfast

import (
	"bytes"
	"encoding/json"
)

// TrailingStrings returns the literals of the last two members of obj when
// they are string members named a and b, in that order — the shape of a
// token delta event, `{…,"actor":"…","text":"…"}`, whose two strings the
// Agent Protocol face reads once per token. The literals are returned
// still encoded (Unquote decodes them). ok is false for any other shape:
// read those with encoding/json.
//
// A string literal holds no unescaped '"', so the last `,"b":"` of obj
// starts the member b unless a literal before it was broken, which the
// check of each literal (as StringAfter checks it) rules out.
func TrailingStrings(obj []byte, a, b string) (litA, litB []byte, ok bool) {
	keyB := `,"` + b + `":`
	i := bytes.LastIndex(obj, []byte(keyB+`"`))
	if i < 0 {
		return nil, nil, false
	}
	if litB, ok = StringAfter(obj[i:], keyB); !ok {
		return nil, nil, false
	}
	keyA := []byte(`,"` + a + `":"`)
	j := bytes.LastIndex(obj[:i], keyA)
	if j < 0 {
		return nil, nil, false
	}
	litA = obj[j+len(keyA)-1 : i]
	if len(litA) <= 2 || !validString(litA) {
		return nil, nil, false
	}
	return litA[:len(litA):len(litA)], litB, true
}

// Unquote decodes a string literal that StringAfter or TrailingStrings
// returned: a plain one by slicing, any other through encoding/json.
func Unquote(lit []byte) (string, bool) {
	in := lit[1 : len(lit)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return string(in), true
	}
	var s string
	return s, json.Unmarshal(lit, &s) == nil
}
