package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
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
