package engine

import (
	"context"
	"encoding/json"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/event"
	"agentd/internal/model"
)

// SubjectProgress is the subject suffix of a tool's progress,
// engine.run.<run>.progress: what a long-running tool call (a peer agent
// called as a tool) reports while the call is under way. It is not the
// run's own output: readers that assemble the run's answer from its text
// deltas never see it there.
const SubjectProgress = "progress"

// SubjectRunProgress is the subject of run runID's tool progress.
func SubjectRunProgress(runID string) event.Subject { return runSubject(runID, "."+SubjectProgress) }

// ToolProgress is the payload of a progress envelope: one increment of a
// tool call's progress. Text is a chunk of what the tool streams (a peer
// agent's answer, token by token); State is the state of the work behind
// the call when it changed (a peer task's "working", "input-required");
// Artifact is a non-text result chunk.
type ToolProgress struct {
	// Tool and CallID name the call (the model's tool name and call id).
	Tool   string `json:"tool"`
	CallID string `json:"call_id,omitempty"`
	// Source names what reports (the peer agent's card URL, a child run).
	Source   string          `json:"source,omitempty"`
	Text     string          `json:"text,omitempty"`
	State    string          `json:"state,omitempty"`
	Artifact *model.Artifact `json:"artifact,omitempty"`
}

// EmitToolProgress publishes p as progress of run runID.
func EmitToolProgress(ctx context.Context, pub Publisher, runID string, p ToolProgress) error {
	if p.Tool == "" {
		return errdefs.Validationf("emit tool progress of run %s: no tool name", runID)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return errdefs.Internalf("emit tool progress of run %s: %w", runID, err)
	}
	env := event.Envelope{Subject: SubjectRunProgress(runID), Time: time.Now().UTC(), RunID: runID,
		Payload: b}
	return pub.Publish(ctx, env)
}

// runIDKey is the context key of WithRunID.
type runIDKey struct{}

// WithRunID returns ctx carrying the id of the run a tool call belongs to.
// Engines set it, next to WithHost, on the context of the tools they run,
// so that a tool can publish its progress under the run
// (EmitToolProgress) and name the child runs it starts.
func WithRunID(ctx context.Context, runID string) context.Context {
	return context.WithValue(ctx, runIDKey{}, runID)
}

// RunIDFromContext returns the run id WithRunID attached.
func RunIDFromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(runIDKey{}).(string)
	return id, ok && id != ""
}

// SubjectHandoff is the subject suffix of a hand-off, engine.run.<run>.handoff:
// the run's conversation passes to another agent, whose events follow in
// the run's stream. Its payload is the host's (agentd: runtime.HandoffData).
const SubjectHandoff = "handoff"
