package runtime

import (
	"encoding/json"
	"maps"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runlog"
)

// EventWorkflow is the log type of an engine.WorkflowNote: a message
// between a workflow's steps and its coordinator, a dropped message, a
// narration, a shared memory write (WorkflowData).
const EventWorkflow = "workflow"

// WorkflowData is the body of a workflow event. Kind is zenflow's progress
// event name ("message_sent", "message_dropped", "coordinator_narration",
// …); Payload is the engine's JSON object.
type WorkflowData struct {
	Actor   string          `json:"actor,omitempty"`
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
}

// MetaOutcome is the task metadata key of a run that completed partially
// (engine.Outcome): its value is the outcome ("partial"), and
// MetaOutcomeDetail holds the engine's detail (the steps that did not
// complete). The task's state stays completed: every face reads the
// outcome beside it.
const (
	MetaOutcome       = "outcome"
	MetaOutcomeDetail = "outcome_detail"
)

// noteOutcome keeps the attempt's engine.Outcome for its final commit.
func (h *host) noteOutcome(o engine.Outcome) error {
	if err := engine.Validate(o); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return errdefs.Conflictf("publish: attempt of run %s has ended", h.x.runID)
	}
	h.outcome = &o
	return nil
}

// partialOutcome is the engine's Outcome when the attempt completed.
func (x *execution) partialOutcome(state run.TaskState) *engine.Outcome {
	if state != run.StateCompleted {
		return nil
	}
	x.host.mu.Lock()
	defer x.host.mu.Unlock()
	return x.host.outcome
}

// markOutcome records o (nil: a full completion) in t's metadata, on a
// copy so that a failed commit leaves the task as last written.
func markOutcome(t *run.Task, o *engine.Outcome) {
	if o == nil && t.Metadata[MetaOutcome] == nil {
		return
	}
	md := maps.Clone(t.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	delete(md, MetaOutcome)
	delete(md, MetaOutcomeDetail)
	if o != nil {
		md[MetaOutcome] = o.Status
		if len(o.Detail) > 0 {
			md[MetaOutcomeDetail] = o.Detail
		}
	}
	if len(md) == 0 {
		md = nil
	}
	t.Metadata = md
}

// workflowEvent is the log event of a workflow note.
func workflowEvent(e engine.WorkflowNote) (string, runlog.Body, error) {
	return encodeEvent(EventWorkflow, WorkflowData{Actor: logActor(e.Actor), Kind: e.Kind, Payload: e.Payload})
}

// OutcomeOf is a task's outcome beside its state: "partial" for a run
// that completed partially, "" otherwise.
func OutcomeOf(t run.Task) string {
	s, _ := t.Metadata[MetaOutcome].(string)
	return s
}
