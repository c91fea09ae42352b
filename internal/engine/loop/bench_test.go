package loop_test

import (
	"context"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
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

// echoRules are the demo configuration's echo agent rules.
var echoRules = []scripted.Rule{
	{Match: `^stream (\d+) every (\d+)ms$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}, Delay: "{{index .Groups 2}}ms"},
	{Match: `^stream (\d+)$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}},
	{Match: `(?s).*`, Reply: "{{.Text}}"},
}

// framingHost is a minimal host shaped like agentd's runtime: it frames
// runs itself, offers an interrupt channel that never fires, and
// discards everything else.
type framingHost struct {
	engine.NoopHost
	interrupts chan engine.Interrupt
}

func (framingHost) FramesRuns() bool                      { return true }
func (h framingHost) Interrupts() <-chan engine.Interrupt { return h.interrupts }

// BenchmarkLoopEcho measures one run of the demo echo agent ("hello
// world" answered in two tokens) on a host that discards everything: the
// engine's and the scripted provider's cost per blocking send.
func BenchmarkLoopEcho(b *testing.B) {
	eng := newEngine(b, loop.Config{Provider: newScripted(b, echoRules...), AgentID: "echo", MaxIterations: 1, ToolNames: []string{}})
	host := framingHost{interrupts: make(chan engine.Interrupt, 1)}
	ctx := context.Background()
	run := engine.Run{ID: "bench-run", Attributes: map[string]string{"agent_id": "echo", "run_id": "bench-run", "task_id": "task-1", "context_id": "ctx-1"}}
	user := []model.Message{model.NewText(model.RoleUser, "hello world")}
	b.ReportAllocs()
	for b.Loop() {
		board := engine.NewBoard()
		board.SetChannel(engine.MainChannel, user)
		if _, err := eng.Execute(ctx, run, host, board); err != nil {
			b.Fatal(err)
		}
	}
}
