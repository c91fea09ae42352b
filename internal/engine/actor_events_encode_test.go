package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"agentd/internal/errdefs"
)

// encodeTexts covers every escaping rule of encoding/json's strings.
var encodeTexts = []string{
	"", "hello", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff", "ctl \x00\x01\x1f\x7f",
	"<html> & more", "line\u2028sep\u2029par", "héllo wörld ✓ 🎉", "bad utf8 \xff\xfe end",
	"truncated \xe2\x82", "\xe2\x80", "/slash/", "a.b c*d>e",
}

// randomStrings returns n strings of random bytes or runes.
func randomStrings(n int) []string {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, r.IntN(20))
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		if i%2 == 0 {
			out[i] = string(b)
			continue
		}
		rs := make([]rune, len(b))
		for j := range rs {
			rs[j] = rune(r.IntN(0x2100))
		}
		out[i] = string(rs)
	}
	return out
}

// stepErrors are step errors with and without classes, empty messages
// included.
func stepErrors(text string) []error {
	return []error{nil, errors.New(text), errdefs.Validationf("bad %s", text), errdefs.Internal(errors.New(text))}
}

func checkStepPayload(t *testing.T, runID, actor, kind string, detail any, stepErr error) {
	t.Helper()
	p := StepPayload{RunID: runID, Actor: actor, Kind: kind}
	var raw json.RawMessage
	if detail != nil {
		var err error
		if raw, err = json.Marshal(detail); err != nil {
			t.Fatal(err)
		}
		p.Detail = raw
	}
	if stepErr != nil {
		p.Error, p.ErrorClass = stepErr.Error(), errdefs.ClassOf(stepErr)
	}
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendStepPayload(nil, runID, actor, kind, raw, stepErr); !bytes.Equal(got, want) {
		t.Fatalf("appendStepPayload(%q, %q, %q, %s, %v)\n got %s\nwant %s", runID, actor, kind, raw, stepErr, got, want)
	}
}

func TestStepPayloadIsWhatJSONEncodes(t *testing.T) {
	details := func(s string) []any {
		return []any{nil, map[string]any{"iteration": 1, "tool": s}, []string{}, map[string]string(nil), s, 0, json.RawMessage(` { "a" : "<` + "\u2028" + `>" } `)}
	}
	for _, s := range append(encodeTexts, randomStrings(1000)...) {
		for _, d := range details(s) {
			for _, e := range stepErrors(s) {
				checkStepPayload(t, s, "agent."+s, s, d, e)
			}
		}
	}
}

func FuzzStepPayload(f *testing.F) {
	for _, s := range encodeTexts {
		f.Add(s, s, s, s)
	}
	f.Fuzz(func(t *testing.T, runID, actor, kind, text string) {
		for _, e := range stepErrors(text) {
			checkStepPayload(t, runID, actor, kind, map[string]string{"t": text}, e)
		}
	})
}

// rawDetails are encoded details, canonical or not.
var rawDetails = []string{
	`0`, `-0`, `01`, `1.`, `1.5`, `-1.5e+10`, `1E-2`, `1e`, `-`, `tru`, `true`, `false`, `nul`, `[true,false,null]`,
	`{"a":{"b":[1,{"c":"d"}]},"e":[]}`, `{"a":}`, `{"a" :1}`, `{,}`, `[1,]`, `[,1]`, `{"a":1"b":2}`, `"\uZZZZ"`,
	`"\u00e9"`, `"\x"`, `"a\"`, `"\/"`, "\"tab\there\"", `{"a":1}x`, `{"a":1}{}`, `[[[[]]]]`,
	`{}`, `{"iteration":1}`, `{"iteration":1,"tool":"calc","call_id":"c 1"}`, `[1,2,3]`, `"str"`, `null`, `12.5e3`,
	` {}`, `{ }`, "{\n}", `{"a":"<"}`, `{"a":"\u003c"}`, `{"a":"&"}`, "{\"a\":\"\u2028\"}", `{"a":"\u2028"}`,
	`{"a":"x\"y"}`, `{"a":"x\\"}`, `{"a":"x\\\" y"}`, `{"a":" spaced "}`, "{\"a\":\"\xff\"}", `{"a":1,}`, `{`, ``,
	`"\u00e9"`, `["a", "b"]`, `["a","b"]`, "{\"a\":\"\xe2\x80\"}",
}

// checkMarshalOutput checks isMarshalOutput against json.Marshal: a true
// answer means Marshal leaves raw as it is, and — but for nesting beyond
// maxDetailDepth — a false one that it does not.
func checkMarshalOutput(t *testing.T, raw []byte) {
	t.Helper()
	got, err := json.Marshal(json.RawMessage(raw))
	same := err == nil && bytes.Equal(got, raw) && len(raw) > 0
	if is := isMarshalOutput(raw); is != same && (is || depth(raw) <= maxDetailDepth) {
		t.Fatalf("isMarshalOutput(%q) = %v, but json.Marshal gives %q, %v", raw, is, got, err)
	}
}

// depth is how deeply brackets nest in raw, strings ignored.
func depth(raw []byte) int {
	d, deepest, inString := 0, 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == '{' || c == '['):
			d++
			deepest = max(deepest, d)
		case !inString && (c == '}' || c == ']'):
			d--
		}
	}
	return deepest
}

func TestIsMarshalOutput(t *testing.T) {
	canonical := 0
	for _, raw := range rawDetails {
		checkMarshalOutput(t, []byte(raw))
		if isMarshalOutput([]byte(raw)) {
			canonical++
		}
		// Whatever json.Marshal produces is recognised.
		if out, err := json.Marshal(json.RawMessage(raw)); err == nil && len(raw) > 0 && !isMarshalOutput(out) {
			t.Errorf("json.Marshal(%q) = %q is not recognised as its own output", raw, out)
		}
	}
	if canonical < 10 {
		t.Errorf("only %d of the canonical details were recognised", canonical)
	}
}

func FuzzIsMarshalOutput(f *testing.F) {
	for _, raw := range rawDetails {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkMarshalOutput(t, raw) })
}

func TestIsMarshalOutputDepth(t *testing.T) {
	for _, n := range []int{1, maxDetailDepth - 1, maxDetailDepth, maxDetailDepth + 1, maxDetailDepth + 2, 20000} {
		raw := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		checkMarshalOutput(t, raw)
		if want := n <= maxDetailDepth; isMarshalOutput(raw) != want {
			t.Errorf("depth %d: isMarshalOutput = %v, want %v", n, !want, want)
		}
	}
}
