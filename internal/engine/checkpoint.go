package engine

import (
	"encoding/json"
	"time"

	"agentd/internal/model"
)

// BoardSnapshot is a serialisable copy of a Board's state, used by
// checkpoints. It carries no lock and is safe to JSON-encode.
type BoardSnapshot struct {
	Vars     map[string]any             `json:"vars"`
	Channels map[string][]model.Message `json:"channels,omitempty"`
}

// Checkpoint is the engine-agnostic record an engine produces at a safe
// boundary of a run. The engine alone interprets Step and Payload.
type Checkpoint struct {
	// ExecID is the producing Run.ID.
	ExecID string `json:"exec_id"`
	// Step is an opaque engine-defined marker of where the run is.
	Step string `json:"step,omitempty"`
	// Iteration is an optional monotonic counter for looping engines.
	Iteration int `json:"iteration,omitempty"`
	// Board is the board at the boundary; never nil in a saved checkpoint.
	Board *BoardSnapshot `json:"board"`
	// Payload is engine-private state, opaque JSON to the store.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Attributes mirrors Run.Attributes when the checkpoint was produced.
	Attributes map[string]string `json:"attributes,omitempty"`
	// Timestamp is when the engine produced the checkpoint.
	Timestamp time.Time `json:"timestamp"`
	// OriginalStartedAt is when the first, fresh attempt of the run
	// started; it stays constant across resumes. Zero means unrecorded.
	OriginalStartedAt time.Time `json:"original_started_at,omitzero"`
	// SpecVersion is the engine's definition version at the time; a
	// Resumer compares it to detect drift. Empty skips the check.
	SpecVersion string `json:"spec_version,omitempty"`
}
