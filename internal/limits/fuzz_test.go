package limits

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScanBody: the edge's one-pass scan never panics, never reports a
// depth beyond what it was allowed to reach, and reads what the faces'
// decoders read: on valid JSON the same nesting as encoding/json; the
// method the JSON-RPC servers see (json.Decoder's first value into a
// struct field, keys matched case-insensitively and unescaped); and a
// part count at least that of any array encoding/json would decode into a
// "parts" field.
func FuzzScanBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"hi"}]}}}`,
		`{"text":"a\"b","parts":[1,2,3]}`, `[[[[]]]]`, `{"method":"x\u0041"}`, `"`, `{"a":"\\"}`, ``,
		`{"Method":"SendMessage"}`, `{"m\u0065thod":"Send\u004dessage"}`, `{"method":"x","method":null}`,
		`{"method":"x"} {"method":"y"}`, `{"message":{"P\u0061RTS":[1,2,3]}}`, `{"partſ":[1,2]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sh := scanBody(b, 16)
		if sh.depth > 17 {
			t.Fatalf("depth %d past the cap", sh.depth)
		}
		if sh.depth > 16 {
			return
		}
		var env struct {
			Method string `json:"method"`
		}
		if json.NewDecoder(bytes.NewReader(b)).Decode(&env) == nil && sh.method != env.Method {
			t.Fatalf("method %q, a JSON-RPC server reads %q", sh.method, env.Method)
		}
		var first any
		if json.NewDecoder(bytes.NewReader(b)).Decode(&first) == nil {
			if n := partsIn(first); sh.maxParts < n {
				t.Fatalf("%d parts, encoding/json decodes an array of %d under a parts key", sh.maxParts, n)
			}
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if d := jsonDepth(v); d != sh.depth {
			t.Fatalf("depth %d, encoding/json sees %d", sh.depth, d)
		}
	})
}

// partsIn is the longest array in v under a key encoding/json would match
// to a field named "parts".
func partsIn(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if a, ok := e.([]any); ok && strings.EqualFold(k, "parts") {
				n = max(n, len(a))
			}
			n = max(n, partsIn(e))
		}
	case []any:
		for _, e := range x {
			n = max(n, partsIn(e))
		}
	}
	return n
}

func jsonDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, jsonDepth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, jsonDepth(e))
		}
		return d + 1
	}
	return 0
}
