package runtime

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// A history window cut by message count never starts with tool results
// whose call was cut off (OpenAI-compatible endpoints reject such a
// request): after one calculator turn, history_limit 3 would start the
// next run's board with the tool's result.
func TestHistoryWindowKeepsToolCallsWithTheirResults(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []model.Message
	)
	rec := engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		mu.Lock()
		seen = b.Channel(engine.MainChannel)
		mu.Unlock()
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "ok"))
		return b, nil
	})
	a := testAgent("calc", rec)
	a.HistoryLimit = 3
	st := newTestRuntime(t, nil, a)
	ctx := ctxT(t)
	// A first turn that used a tool: user, call, result, answer.
	call := model.ToolCall{ID: "call-1", Name: "calculator", Arguments: json.RawMessage(`{"expression":"2+2"}`)}
	turn := []model.Message{
		model.NewText(model.RoleUser, "what is 2+2"),
		{ID: "m-call", Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(call)}},
		{ID: "m-result", Role: model.RoleTool, Parts: []model.Part{model.ToolResultPart(model.ToolResult{ToolCallID: "call-1", Name: "calculator", Content: "4"})}},
		model.NewText(model.RoleAssistant, "The result is 4."),
	}
	var msgs []run.Message
	for i, m := range turn {
		if m.ID == "" {
			m.ID = "m-" + itoa(i)
		}
		msgs = append(msgs, run.Message{ContextID: "c-calc", Message: m})
	}
	if err := st.st.Apply(ctx, store.Change{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	sub, err := st.Send(ctx, SendRequest{AgentID: "calc", ContextID: "c-calc", Message: model.NewText(model.RoleUser, "and times 3?")})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, st, sub.Task.ID)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the engine saw no history")
	}
	for _, p := range seen[0].Parts {
		if p.Type == model.PartToolResult {
			t.Fatalf("the history starts with a tool result whose call was cut off: %+v", seen)
		}
	}
	if last := seen[len(seen)-1]; last.Text() != "and times 3?" {
		t.Errorf("the history ends with %q, want the new message", last.Text())
	}
}
