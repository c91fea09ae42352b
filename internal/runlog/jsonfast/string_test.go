package jsonfast

import (
	"bytes"
	"encoding/json"
	"testing"
)

// tokenPayload is the shape of the engine's token payload: its stream
// delta with only the type and content set.
type tokenPayload struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

const tokenPrefix = `{"type":"token","content":`

// checkStringAfter checks StringAfter on obj against encoding/json: when
// it takes the fast path, obj is one JSON object whose content member is
// the literal it returned, on one line.
func checkStringAfter(t *testing.T, obj []byte) {
	t.Helper()
	lit, ok := StringAfter(obj, tokenPrefix)
	if !ok {
		return
	}
	var whole tokenPayload
	if err := json.Unmarshal(obj, &whole); err != nil || !json.Valid(obj) {
		t.Fatalf("StringAfter(%q) = %s, but encoding/json refuses the payload: %v", obj, lit, err)
	}
	var text string
	if err := json.Unmarshal(lit, &text); err != nil || text != whole.Content || text == "" {
		t.Fatalf("StringAfter(%q) = %s (%q, %v), encoding/json reads %q", obj, lit, text, err, whole.Content)
	}
	if bytes.ContainsAny(lit, "\r\n") || cap(lit) != len(lit) {
		t.Fatalf("StringAfter(%q) = %s: breaks a line, or has room to append in place (len %d, cap %d)", obj, lit, len(lit), cap(lit))
	}
}

// checkToken checks AppendObject against encoding/json for text, and that
// StringAfter takes its output apart again (unless text is empty).
func checkToken(t *testing.T, text string) {
	t.Helper()
	want, err := json.Marshal(tokenPayload{Type: "token", Content: text})
	if err != nil {
		t.Fatal(err)
	}
	obj := AppendObject([]byte("x"), tokenPrefix, text)
	if !bytes.Equal(obj[1:], want) || obj[0] != 'x' {
		t.Fatalf("AppendObject(%q) = %s, want x%s", text, obj, want)
	}
	lit, ok := StringAfter(want, tokenPrefix)
	if ok != (text != "") {
		t.Fatalf("StringAfter(%s): ok = %v, want %v", want, ok, text != "")
	}
	if q, _ := json.Marshal(text); ok && !bytes.Equal(lit, q) {
		t.Fatalf("StringAfter(%s) = %s, want the literal encoding/json wrote, %s", want, lit, q)
	}
	checkStringAfter(t, want)
}

func TestStringAfter(t *testing.T) {
	for _, s := range trickyStrings {
		checkToken(t, s)
	}
	for _, obj := range []string{
		`{"type":"token","content":""}`,
		`{"type":"token","content":"a","id":"x"}`,
		`{"type":"token","content":"a"} `,
		`{"type":"token", "content":"a"}`,
		`{"type":"tool_call","content":"a"}`,
		`{"type":"token","content":"a\"}`,
		`{"type":"token","content":"a"b"}`,
		`{"type":"token","content":"a\q"}`,
		`{"type":"token","content":"a\u12"}`,
		"{\"type\":\"token\",\"content\":\"a\nb\"}",
		"{\"type\":\"token\",\"content\":\"\xff\"}",
		`{"type":"token","content":"a",}`,
		`{"type":"token","content":"a"`,
	} {
		if lit, ok := StringAfter([]byte(obj), tokenPrefix); ok {
			t.Errorf("StringAfter(%s) = %s, want not ok", obj, lit)
		}
	}
	for _, obj := range []string{`{"type":"token","content":"\u0041\/\"é"}`, `{"type":"token","content":"<&>"}`} {
		if _, ok := StringAfter([]byte(obj), tokenPrefix); !ok {
			t.Errorf("StringAfter(%s): not ok, want the literal", obj)
		}
		checkStringAfter(t, []byte(obj))
	}
}

// FuzzStringAfter checks the token path against encoding/json: the
// objects AppendObject writes, and any bytes after the prefix.
func FuzzStringAfter(f *testing.F) {
	for _, s := range trickyStrings {
		q, _ := json.Marshal(s)
		f.Add(s, string(q))
	}
	f.Add("x", `"\u00e9\ud83c\udf89\/"`)
	f.Fuzz(func(t *testing.T, text, raw string) {
		checkToken(t, text)
		checkStringAfter(t, []byte(tokenPrefix+raw+"}"))
	})
}
