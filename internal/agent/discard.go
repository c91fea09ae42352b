package agent

import (
	"context"
	"slices"

	"agentd/internal/engine"
)

// DiscardOnInterruptCauses is a Decider that discards the output of a turn
// interrupted for one of its causes — the disposition policy for voice and
// streaming UX, where a barge-in must not leave half a sentence in the
// transcript. Interrupted turns are uncommitted by default anyway; what it
// adds is the attribution (Reason) and an explicit policy at the call site
// that survives a change of defaults. Build it with
// NewDiscardOnInterruptCauses; the zero value matches no cause. It is
// immutable and safe for concurrent use.
type DiscardOnInterruptCauses struct {
	reason string
	causes []engine.Cause
}

// NewDiscardOnInterruptCauses returns a Decider that discards output when
// the turn was interrupted with any of causes, giving reason as the
// finalize reason:
//
//	agent.NewDiscardOnInterruptCauses("barge-in", engine.CauseUserInput, engine.CauseUserCancel)
func NewDiscardOnInterruptCauses(reason string, causes ...engine.Cause) *DiscardOnInterruptCauses {
	return &DiscardOnInterruptCauses{reason: reason, causes: slices.Clone(causes)}
}

// BeforeFinalize implements Decider.
func (d *DiscardOnInterruptCauses) BeforeFinalize(_ context.Context, _ RunInfo, _ *Request, res *Result) (FinalizeDecision, error) {
	if d == nil || res == nil || res.Status != StatusInterrupted || !slices.Contains(d.causes, res.Cause) {
		return FinalizeDecision{}, nil
	}
	return FinalizeDecision{DiscardOutput: true, Reason: d.reason}, nil
}
