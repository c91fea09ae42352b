package runtime

import (
	"testing"

	"agentd/internal/engine"
)

// BenchmarkChildRun is the runtime's cost of a workflow step as a child
// run on memstore — its task, the step's prompt and answer in its own
// transcript, its log (run.start, status, three deltas, status, run.end),
// the state commit — against the same step run in-process: a parent of
// ten steps, each answering at once with three tokens (ns/step).
func BenchmarkChildRun(b *testing.B) {
	const n = 10
	steps := make([]engine.Engine, n)
	for i := range steps {
		steps[i] = burst(3)
	}
	for _, tc := range []struct {
		name  string
		local bool
	}{{"child", false}, {"in-process", true}} {
		b.Run(tc.name, func(b *testing.B) {
			r := newBenchRuntime(b, testAgent("p", stepper{steps: steps, local: tc.local}))
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				sendWait(ctx, b, r, "p", "go")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		})
	}
}
