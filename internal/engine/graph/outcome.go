package graph

import (
	"encoding/json"
	"sort"

	"agentd/internal/engine"
)

// WorkflowStatus is how a workflow run ended (zenflow's WorkflowStatus).
type WorkflowStatus string

// The workflow outcomes Execute reports: completed (nil error, no Outcome
// event), partial (nil error and an engine.Outcome event) and failed (an
// error).
const (
	StatusCompleted WorkflowStatus = "completed"
	StatusPartial   WorkflowStatus = "partial"
	StatusFailed    WorkflowStatus = "failed"
)

// partialDetail is the Detail of a partial run's engine.Outcome: the
// steps that did not complete, by how they ended, with the count of those
// that did.
type partialDetail struct {
	Status    WorkflowStatus `json:"status"`
	Completed int            `json:"completed"`
	Failed    []string       `json:"failed,omitempty"`
	Cancelled []string       `json:"cancelled,omitempty"`
	Skipped   []string       `json:"skipped,omitempty"`
}

// partialOutcome returns the Outcome of a finished run that some step did
// not complete for a failure — failed, cancelled, or skipped because a
// dependency failed — while another completed; nil otherwise. A step
// skipped by its own condition did what the document asked and does not
// make the run partial. Every recorded result counts, nested ones
// (iterations, sub-workflow steps) included.
func (x *execution) partialOutcome() *engine.Outcome {
	x.mu.Lock()
	d := partialDetail{Status: StatusPartial}
	for id, r := range x.st.Results {
		switch {
		case r.Status == StepCompleted:
			d.Completed++
		case r.Status == StepFailed:
			d.Failed = append(d.Failed, id)
		case r.Status == StepCancelled:
			d.Cancelled = append(d.Cancelled, id)
		case r.Status == StepSkipped && r.SkipReason == skipDependency:
			d.Skipped = append(d.Skipped, id)
		}
	}
	x.mu.Unlock()
	if d.Completed == 0 || len(d.Failed)+len(d.Cancelled)+len(d.Skipped) == 0 {
		return nil
	}
	for _, ids := range [][]string{d.Failed, d.Cancelled, d.Skipped} {
		sort.Strings(ids)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return &engine.Outcome{Actor: x.actor, Status: engine.OutcomePartial, Detail: b}
}
