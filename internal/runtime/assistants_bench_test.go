package runtime

import (
	"context"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
)

// BenchmarkSendWaitAssistant is BenchmarkSendWait/serial on a stored
// assistant: what a run pays to read the assistant's latest version and
// find its configured agent (cached) beside the plain send ("agent").
func BenchmarkSendWaitAssistant(b *testing.B) {
	a := testAgent("a", answerer())
	a.Configure = func(string, map[string]any) (engine.Engine, error) { return answerer(), nil }
	for _, name := range []string{"agent", "assistant"} {
		b.Run(name, func(b *testing.B) {
			r := newBenchRuntime(b, a)
			ctx := context.Background()
			req := SendRequest{AgentID: "a", Message: model.NewText(model.RoleUser, "hello world")}
			if name == "assistant" {
				as, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "a", Context: map[string]any{"system_prompt": "p"}})
				if err != nil {
					b.Fatal(err)
				}
				req.AssistantID = as.ID
			}
			b.ReportAllocs()
			for b.Loop() {
				sub, err := r.Send(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Wait(ctx, sub.Task.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
