package loop_test

import (
	"context"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
)

// BenchmarkLoopStream1000Tokens measures one run that streams a
// 1000-token answer through the loop to a host that discards everything:
// the engine's per-token cost on top of the provider's (compare
// scripted's BenchmarkCount1000). ns/token = ns/op ÷ 1000.
func BenchmarkLoopStream1000Tokens(b *testing.B) {
	const tokens = 1000
	eng := newEngine(b, loop.Config{
		Provider: newScripted(b, scripted.Rule{Count: &scripted.Count{Number: "1000"}}),
	})
	ctx := context.Background()
	run := engine.Run{ID: "bench-run"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eng.Execute(ctx, run, engine.NoopHost{}, userBoard("stream")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}
