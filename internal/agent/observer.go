package agent

import (
	"context"

	"agentd/internal/engine"
)

// Observer reacts to the lifecycle of a Run without influencing it: it
// returns nothing, its panics are recovered, and it must treat the Request
// and Result it is shown as read-only (the Result is the value the caller
// receives). To change an outcome, write a Decider.
//
// Calls are synchronous on Run's goroutine; slow work belongs in a
// goroutine the observer owns. One Observer value may serve concurrent
// runs, so implementations must be safe for concurrent use.
//
// Per Run the sequence is
//
//	(OnRunStart [OnInterrupt] OnRunRevise)* OnRunStart [OnInterrupt] OnRunEnd
//
// OnRunEnd fires exactly once, after the last attempt, whatever the outcome
// (including a Decider error). OnInterrupt fires only when the engine
// returned an engine.InterruptedError; a foreign error that merely belongs
// to errdefs.ClassInterrupted still yields StatusInterrupted without it.
type Observer interface {
	// OnRunStart fires after the board is seeded, right before Execute.
	OnRunStart(ctx context.Context, info RunInfo, req *Request)
	// OnInterrupt fires after Execute returned an interrupt, before the
	// Decider chain and OnRunEnd.
	OnInterrupt(ctx context.Context, info RunInfo, intr engine.Interrupt)
	// OnRunRevise fires when a Decider asked for a revision and the budget
	// allows one, before the board is re-seeded. prevRes is the completed
	// attempt being discarded; nextAttempt is prevRes.Attempts+1.
	OnRunRevise(ctx context.Context, info RunInfo, prevRes *Result, nextAttempt int)
	// OnRunEnd fires once with the Result Run is about to return.
	OnRunEnd(ctx context.Context, info RunInfo, res *Result)
}

// BaseObserver implements every Observer method as a no-op; embed it and
// override the hooks you need.
type BaseObserver struct{}

// OnRunStart does nothing.
func (BaseObserver) OnRunStart(context.Context, RunInfo, *Request) {}

// OnInterrupt does nothing.
func (BaseObserver) OnInterrupt(context.Context, RunInfo, engine.Interrupt) {}

// OnRunRevise does nothing.
func (BaseObserver) OnRunRevise(context.Context, RunInfo, *Result, int) {}

// OnRunEnd does nothing.
func (BaseObserver) OnRunEnd(context.Context, RunInfo, *Result) {}

// observers dispatches hooks to a fixed list, isolating each call so one
// observer's panic neither reaches Run nor skips the observers after it.
type observers struct {
	list []Observer
}

func (o observers) runStart(ctx context.Context, info RunInfo, req *Request) {
	o.each(func(ob Observer) { ob.OnRunStart(ctx, info, req) })
}

func (o observers) interrupt(ctx context.Context, info RunInfo, intr engine.Interrupt) {
	o.each(func(ob Observer) { ob.OnInterrupt(ctx, info, intr) })
}

func (o observers) runRevise(ctx context.Context, info RunInfo, prev *Result, next int) {
	o.each(func(ob Observer) { ob.OnRunRevise(ctx, info, prev, next) })
}

func (o observers) runEnd(ctx context.Context, info RunInfo, res *Result) {
	o.each(func(ob Observer) { ob.OnRunEnd(ctx, info, res) })
}

func (o observers) each(call func(Observer)) {
	for _, ob := range o.list {
		guard(ob, call)
	}
}

// guard calls call on ob, recovering a panic: an observer never changes
// the outcome, nor keeps the observers after it from their hook.
func guard(ob Observer, call func(Observer)) {
	defer func() { _ = recover() }()
	call(ob)
}
