package agenttest

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"agentd/internal/agent"
)

// RunDeciderSuite runs DeciderCases(factory) as subtests of t. factory
// returns a ready Decider; it is called once per case.
func RunDeciderSuite(t *testing.T, factory func() agent.Decider) {
	t.Helper()
	run(t, DeciderCases(factory))
}

// DeciderCases returns the contract checks every agent.Decider passes:
//   - it never mutates the Request or Result it is shown, on results of
//     every status;
//   - it tolerates a zero Request and Result (nil slices and State) and a
//     canceled context without panicking;
//   - the State of its decision is its own map, never res.State;
//   - one value serves concurrent calls (run with -race).
func DeciderCases(factory func() agent.Decider) []Case {
	return []Case{
		{"DoesNotMutateInputs", func(r Reporter) { deciderDoesNotMutate(r, factory()) }},
		{"ToleratesZeroInputs", func(r Reporter) { deciderToleratesZero(r, factory()) }},
		{"DecisionStateIsOwnMap", func(r Reporter) { deciderStateNotAliased(r, factory()) }},
		{"ConcurrentUse", func(r Reporter) { deciderConcurrent(r, factory()) }},
	}
}

func deciderDoesNotMutate(r Reporter, d agent.Decider) {
	r.Helper()
	for _, f := range fixtures() {
		who := describe("BeforeFinalize", f.name)
		reqBefore, resBefore := copyRequest(f.req), copyResult(f.res)
		guard(r, who, func() { _, _ = d.BeforeFinalize(context.Background(), f.info, f.req, f.res) })
		reqBefore.diff(r, who, f.req)
		resBefore.diff(r, who, f.res)
	}
}

func deciderToleratesZero(r Reporter, d agent.Decider) {
	r.Helper()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ctx := range []context.Context{context.Background(), canceled} {
		res := &agent.Result{}
		before := copyResult(res)
		guard(r, "BeforeFinalize(zero inputs)", func() {
			_, _ = d.BeforeFinalize(ctx, agent.RunInfo{}, &agent.Request{}, res)
		})
		before.diff(r, "BeforeFinalize(zero inputs)", res)
	}
}

func deciderStateNotAliased(r Reporter, d agent.Decider) {
	r.Helper()
	for _, f := range fixtures() {
		who := describe("BeforeFinalize", f.name)
		var dec agent.FinalizeDecision
		guard(r, who, func() { dec, _ = d.BeforeFinalize(context.Background(), f.info, f.req, f.res) })
		if dec.State != nil && reflect.ValueOf(dec.State).UnsafePointer() == reflect.ValueOf(f.res.State).UnsafePointer() {
			r.Errorf("%s returned Result.State itself as FinalizeDecision.State; return a map of its own", who)
		}
	}
}

func deciderConcurrent(r Reporter, d agent.Decider) {
	r.Helper()
	const workers = 4
	var wg sync.WaitGroup
	var mu sync.Mutex // Reporter implementations need not be goroutine-safe.
	for range workers {
		wg.Go(func() {
			for _, f := range fixtures() {
				func() {
					defer func() {
						if v := recover(); v != nil {
							mu.Lock()
							r.Errorf("concurrent %s panicked: %v", describe("BeforeFinalize", f.name), v)
							mu.Unlock()
						}
					}()
					_, _ = d.BeforeFinalize(context.Background(), f.info, f.req, f.res)
				}()
			}
		})
	}
	wg.Wait()
}
