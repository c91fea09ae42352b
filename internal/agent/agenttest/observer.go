package agenttest

import (
	"context"
	"sync"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/engine"
)

// RunObserverSuite runs ObserverCases(factory) as subtests of t. factory
// returns a ready Observer; it is called once per case.
func RunObserverSuite(t *testing.T, factory func() agent.Observer) {
	t.Helper()
	run(t, ObserverCases(factory))
}

// ObserverCases returns the contract checks every agent.Observer passes:
//   - every hook tolerates nil and zero inputs and a canceled context
//     without panicking (Run recovers panics, but a panicking observer
//     silently loses its side effect);
//   - no hook mutates the Request or Result it is shown, through both
//     lifecycle shapes (start → interrupt → end; start → revise → start
//     → end) on results of every status;
//   - one value serves concurrent lifecycles (run with -race).
func ObserverCases(factory func() agent.Observer) []Case {
	return []Case{
		{"ToleratesNilAndZeroInputs", func(r Reporter) { observerToleratesZero(r, factory()) }},
		{"DoesNotMutateInputs", func(r Reporter) { observerDoesNotMutate(r, factory()) }},
		{"ConcurrentUse", func(r Reporter) { observerConcurrent(r, factory()) }},
	}
}

func observerToleratesZero(r Reporter, o agent.Observer) {
	r.Helper()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ctx := range []context.Context{context.Background(), canceled} {
		var zero agent.RunInfo
		guard(r, "OnRunStart(nil request)", func() { o.OnRunStart(ctx, zero, nil) })
		guard(r, "OnRunStart(zero request)", func() { o.OnRunStart(ctx, zero, &agent.Request{}) })
		guard(r, "OnInterrupt(zero interrupt)", func() { o.OnInterrupt(ctx, zero, engine.Interrupt{}) })
		guard(r, "OnRunRevise(nil result)", func() { o.OnRunRevise(ctx, zero, nil, 0) })
		guard(r, "OnRunRevise(zero result)", func() { o.OnRunRevise(ctx, zero, &agent.Result{}, 2) })
		guard(r, "OnRunEnd(nil result)", func() { o.OnRunEnd(ctx, zero, nil) })
		guard(r, "OnRunEnd(zero result)", func() { o.OnRunEnd(ctx, zero, &agent.Result{}) })
	}
}

func observerDoesNotMutate(r Reporter, o agent.Observer) {
	r.Helper()
	ctx := context.Background()
	for _, f := range fixtures() {
		req := copyRequest(f.req)
		guard(r, describe("OnRunStart", f.name), func() { o.OnRunStart(ctx, f.info, f.req) })
		req.diff(r, describe("OnRunStart", f.name), f.req)

		if f.res.Cause != "" {
			guard(r, describe("OnInterrupt", f.name), func() {
				o.OnInterrupt(ctx, f.info, engine.Interrupt{Cause: f.res.Cause, Detail: f.res.CauseDetail})
			})
		}
		if f.res.Attempts > 1 {
			prev := fixtures()[0].res
			before := copyResult(prev)
			guard(r, describe("OnRunRevise", f.name), func() { o.OnRunRevise(ctx, f.info, prev, f.res.Attempts) })
			before.diff(r, describe("OnRunRevise", f.name), prev)
			guard(r, describe("OnRunStart", f.name), func() { o.OnRunStart(ctx, f.info, f.req) })
		}

		res := copyResult(f.res)
		guard(r, describe("OnRunEnd", f.name), func() { o.OnRunEnd(ctx, f.info, f.res) })
		res.diff(r, describe("OnRunEnd", f.name), f.res)
		req.diff(r, describe("OnRunEnd", f.name), f.req)
	}
}

func observerConcurrent(r Reporter, o agent.Observer) {
	r.Helper()
	const workers = 4
	var wg sync.WaitGroup
	var mu sync.Mutex // Reporter implementations need not be goroutine-safe.
	ctx := context.Background()
	for range workers {
		wg.Go(func() {
			for _, f := range fixtures() {
				func() {
					defer func() {
						if v := recover(); v != nil {
							mu.Lock()
							r.Errorf("concurrent lifecycle %s panicked: %v", f.name, v)
							mu.Unlock()
						}
					}()
					o.OnRunStart(ctx, f.info, f.req)
					if f.res.Cause != "" {
						o.OnInterrupt(ctx, f.info, engine.Interrupt{Cause: f.res.Cause})
					}
					o.OnRunEnd(ctx, f.info, f.res)
				}()
			}
		})
	}
	wg.Wait()
}
