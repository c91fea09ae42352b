package agent_test

import (
	"context"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

// BenchmarkRun measures Run's own overhead around a trivial engine: seed,
// observer and decider dispatch, classification, message extraction.
func BenchmarkRun(b *testing.B) {
	eng := replyEngine(nil, "hi", nil)
	req := userRequest("hello")
	req.RunID = "run-1"
	ag := hooked(supportAgent(), []agent.Observer{agent.BaseObserver{}}, agent.BaseDecider{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agent.Run(ctx, ag, eng, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandoffDecider scans a long turn whose hand-off sits early,
// followed by many messages.
func BenchmarkHandoffDecider(b *testing.B) {
	msgs := []model.Message{assistant(call("c0", "transfer_to_billing", `{"reason":"r"}`)), toolResult("c0", "ok", false)}
	for range 50 {
		msgs = append(msgs, assistant(model.TextPart("more")), toolResult("x", "ok", false))
	}
	res := &agent.Result{Status: agent.StatusCompleted, Messages: msgs}
	d := agent.HandoffDecider(handoffs())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.BeforeFinalize(ctx, agent.RunInfo{}, &agent.Request{}, res); err != nil {
			b.Fatal(err)
		}
	}
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

// BenchmarkRunLoopEcho measures a turn of the demo echo agent the way
// agentd's blocking send runs it: a seeder that loads the history, the
// loop engine over the scripted provider answering "hello world" in two
// tokens, and a host that discards what it is given.
func BenchmarkRunLoopEcho(b *testing.B) {
	prov, err := scripted.New(scripted.Config{Rules: []scripted.Rule{
		{Match: `^stream (\d+) every (\d+)ms$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}, Delay: "{{index .Groups 2}}ms"},
		{Match: `^stream (\d+)$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}},
		{Match: `(?s).*`, Reply: "{{.Text}}"},
	}})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := loop.New(loop.Config{Provider: prov, AgentID: "echo", MaxIterations: 1})
	if err != nil {
		b.Fatal(err)
	}
	req := userRequest("hello world")
	req.RunID = "run-1"
	history := []model.Message{req.Message}
	opts := []agent.RunOption{
		agent.WithEngineHost(framingHost{interrupts: make(chan engine.Interrupt, 1)}),
		agent.WithBoardSeed(agent.BoardSeederFunc(func(context.Context, agent.RunInfo, *agent.Request) (*engine.Board, error) {
			board := engine.NewBoard()
			board.SetChannel(engine.MainChannel, history)
			return board, nil
		})),
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := agent.Run(ctx, agent.Agent{ID: "echo"}, eng, req, opts...)
		if err != nil || res.Status != agent.StatusCompleted {
			b.Fatal(res, err)
		}
	}
}
