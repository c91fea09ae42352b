package runtime

import (
	"encoding/json"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/event"
	"agentd/internal/runlog"
)

// ProgressData is the body of a progress event: an increment of a tool
// call's progress while it runs — a peer agent's streamed answer or state,
// when the peer is called as a tool (engine.ToolProgress). It is not the
// run's own output: A2A readers get it as a working status update, never
// as a chunk of the answer.
type ProgressData = engine.ToolProgress

// progressEvent translates a progress envelope.
func progressEvent(env event.Envelope) (string, runlog.Body, error) {
	var p ProgressData
	if err := json.Unmarshal(env.Payload, &p); err != nil || p.Tool == "" {
		return "", runlog.Body{}, errdefs.Validationf("publish progress: payload must be {\"tool\":…,\"call_id\":…,\"text\":…}: %v", err)
	}
	body, err := encodeBody(p)
	return EventProgress, runlog.Object(body), err
}
