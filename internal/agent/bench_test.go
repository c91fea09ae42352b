package agent_test

import (
	"context"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/model"
)

// BenchmarkRun measures Run's own overhead around a trivial engine: seed,
// observer and decider dispatch, classification, message extraction.
func BenchmarkRun(b *testing.B) {
	eng := replyEngine(nil, "hi", nil)
	req := userRequest("hello")
	req.RunID = "run-1"
	opts := []agent.RunOption{agent.WithObserver(agent.BaseObserver{}), agent.WithDecider(agent.BaseDecider{})}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agent.Run(ctx, supportAgent(), eng, req, opts...); err != nil {
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
