package agentproto

import (
	"encoding/json"
	"testing"

	"agentd/internal/errdefs"
)

// FuzzRunBody feeds a run's body through what the face does before the
// runtime sees it: decoding, the checks, the input's human message. Any
// refusal must be a validation error (a 422), never a panic or another
// class.
func FuzzRunBody(f *testing.F) {
	for _, s := range []string{
		`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hi"}]}}`,
		`{"assistant_id":"echo","input":{"messages":[{"type":"human","content":[{"type":"text","text":"x"}]}]},"stream_mode":["values","messages-tuple"]}`,
		`{"assistant_id":"echo","command":{"resume":{"type":"accept"}},"multitask_strategy":"enqueue"}`,
		`{"assistant_id":"echo","input":{"messages":"x"},"checkpoint":{"checkpoint_id":"r.1"},"webhook":"http://x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b runBody
		if json.Unmarshal(raw, &b) != nil {
			return
		}
		if err := b.check(); err != nil {
			if !errdefs.IsValidation(err) {
				t.Fatalf("check: %v is not a validation error", err)
			}
			return
		}
		if _, err := userMessage(b.Input); err != nil && !errdefs.IsValidation(err) {
			t.Fatalf("input: %v is not a validation error", err)
		}
	})
}

// FuzzTokenLiterals: tokens joined to a message still encoded
// (aiBuild.addLiteral), then decoded once, read as the tokens decoded one
// by one and joined (the plain implementation), whatever they hold —
// escapes, quotes, HTML, invalid UTF-8 — and with decoded text between.
func FuzzTokenLiterals(f *testing.F) {
	f.Add("Hello", " wor\"ld\\", "\u00e9\u2028<b>&", "\n\t\x01")
	f.Add("", "\xff\xfe", "tok", "\U0001F600")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		var got aiBuild
		want := ""
		for i, s := range []string{a, b, c, d} {
			lit, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var plain string
			if err := json.Unmarshal(lit, &plain); err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				got.addText(plain) // a token of the general path, between
			} else if !got.addLiteral(lit) {
				t.Fatalf("%s refused", lit)
			}
			want += plain
		}
		if s := got.content(); s != want {
			t.Fatalf("content %q, want %q", s, want)
		}
	})
}
