package limits

import (
	"encoding/json"
	"testing"
)

// FuzzScanBody: the edge's one-pass scan never panics, never reports a
// depth beyond what it was allowed to reach, and on valid JSON agrees with
// encoding/json about the top-level method and the nesting.
func FuzzScanBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"hi"}]}}}`,
		`{"text":"a\"b","parts":[1,2,3]}`, `[[[[]]]]`, `{"method":"x\u0041"}`, `"`, `{"a":"\\"}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sh := scanBody(b, 16)
		if sh.depth > 17 {
			t.Fatalf("depth %d past the cap", sh.depth)
		}
		var env struct {
			Method json.RawMessage `json:"method"`
		}
		var v any
		if sh.depth > 16 || json.Unmarshal(b, &v) != nil {
			return
		}
		if d := jsonDepth(v); d != sh.depth {
			t.Fatalf("depth %d, encoding/json sees %d", sh.depth, d)
		}
		if _, ok := v.(map[string]any); !ok || json.Unmarshal(b, &env) != nil {
			return
		}
		var m string
		if json.Unmarshal(env.Method, &m) == nil && sh.method != "" && sh.method != m {
			t.Fatalf("method %q, encoding/json reads %q", sh.method, m)
		}
	})
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
