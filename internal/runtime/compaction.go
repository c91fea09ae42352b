package runtime

import (
	"encoding/json"

	"agentd/internal/errdefs"
)

// EventContextCompaction is a compaction of a run's context: the loop
// engine summarised the oldest history to stay within the model's window
// (engine/loop, compact.go). Its payload says the request's size before
// and after (tokens_before, tokens_after), how many messages were
// summarised and kept, and the summarisation call's usage.
const EventContextCompaction = "context.compaction"

// CompactionData is the body of a context.compaction event: the step
// actor and the engine's payload.
type CompactionData struct {
	Actor   string          `json:"actor"`
	Payload json.RawMessage `json:"payload"`
}

// compactionBody encodes a compaction event's body.
func compactionBody(actor string, payload json.RawMessage) (json.RawMessage, error) {
	var probe struct {
		Before *int `json:"tokens_before"`
		After  *int `json:"tokens_after"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil || probe.Before == nil || probe.After == nil {
		return nil, errdefs.Validationf("publish context.compaction: payload must be {\"tokens_before\":…,\"tokens_after\":…}: %v", err)
	}
	return encodeBody(CompactionData{Actor: actor, Payload: payload})
}
