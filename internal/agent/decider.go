package agent

import (
	"context"
	"fmt"
	"maps"

	"agentd/internal/errdefs"
)

// Decider decides at the boundary of a turn. After every Execute, Run asks
// each Decider for a FinalizeDecision about the classified Result and
// merges the answers; the merged decision fixes Result.Committed, adds
// State entries and may ask for another attempt (WithMaxRevise).
//
// A Decider returns its decision and never mutates req or res — Run alone
// applies decisions, so the outcome does not depend on decider order
// beyond the documented merge. One Decider value may serve concurrent
// runs, so implementations must be safe for concurrent use. agenttest's
// RunDeciderSuite checks both.
//
// Merge: Deciders run in the order of Agent.Deciders. Boolean fields are ORed; the first non-empty Reason wins;
// for each State key the first decider to set it wins. The first error
// stops the chain: Run then returns (res, err) with res populated,
// Committed false, no revise, and the error wrapped with %w so its errdefs
// class is unchanged. A panicking Decider counts as an errdefs.Internal
// error.
type Decider interface {
	BeforeFinalize(ctx context.Context, info RunInfo, req *Request, res *Result) (FinalizeDecision, error)
}

// BaseDecider is a Decider with no opinion; embed it to satisfy the
// interface as decision points are added.
type BaseDecider struct{}

// BeforeFinalize returns the zero FinalizeDecision.
func (BaseDecider) BeforeFinalize(context.Context, RunInfo, *Request, *Result) (FinalizeDecision, error) {
	return FinalizeDecision{}, nil
}

// FinalizeDecision is a Decider's answer. The zero value means "no
// opinion": a completed turn is committed, any other is not.
type FinalizeDecision struct {
	// DiscardOutput forces Result.Committed to false, whatever the Status
	// (a moderation hit on a completed turn, a barge-in).
	DiscardOutput bool
	// Revise asks Run to discard this attempt and execute again on a
	// freshly seeded board. Run honours it only for a StatusCompleted
	// attempt and only while WithMaxRevise allows another attempt;
	// otherwise it is merely recorded through Reason.
	Revise bool
	// Reason attributes the decision in logs and metrics; Run stores the
	// first non-empty one under Result.State[FinalizeReasonStateKey].
	Reason string
	// State entries are added to Result.State (see HandoffDecider). Run
	// copies the map; the decider must not keep writing to it.
	State map[string]any
}

// merge folds next into d by the rules documented on Decider.
func (d FinalizeDecision) merge(next FinalizeDecision) FinalizeDecision {
	d.DiscardOutput = d.DiscardOutput || next.DiscardOutput
	d.Revise = d.Revise || next.Revise
	if d.Reason == "" {
		d.Reason = next.Reason
	}
	for k, v := range next.State {
		if _, taken := d.State[k]; taken {
			continue
		}
		if d.State == nil {
			d.State = make(map[string]any, len(next.State))
		}
		d.State[k] = v
	}
	return d
}

// decide runs the chain on res and merges the answers.
func decide(ctx context.Context, deciders []Decider, info RunInfo, req *Request, res *Result) (FinalizeDecision, error) {
	var merged FinalizeDecision
	for i, d := range deciders {
		dec, err := callDecider(ctx, d, info, req, res)
		if err != nil {
			return FinalizeDecision{}, fmt.Errorf("agent %q run %q: decider %d (%T): %w", info.AgentID, info.RunID, i, d, err)
		}
		merged = merged.merge(dec)
	}
	return merged, nil
}

func callDecider(ctx context.Context, d Decider, info RunInfo, req *Request, res *Result) (dec FinalizeDecision, err error) {
	defer func() {
		if v := recover(); v != nil {
			dec, err = FinalizeDecision{}, errdefs.Internalf("BeforeFinalize panicked: %v", v)
		}
	}()
	return d.BeforeFinalize(ctx, info, req, res)
}

// apply writes the merged decision into res; it is the only place a
// decision changes a Result.
func (d FinalizeDecision) apply(res *Result) {
	res.Committed = res.Status == StatusCompleted && !d.DiscardOutput
	maps.Copy(res.State, d.State)
	if d.Reason != "" {
		res.State[FinalizeReasonStateKey] = d.Reason
	}
}
