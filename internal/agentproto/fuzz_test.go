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
