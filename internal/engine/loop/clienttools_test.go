package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

// TestClientToolParksUntilResults: a tool the user's message offers
// (engine.MetadataClientTools) is offered to the model; a call to it asks
// the host once with the pending calls and parks the run; the resumed
// attempt gets the client's results from the answer and the run goes on.
// A call to a tool neither the agent nor the client offers is refused.
func TestClientToolParksUntilResults(t *testing.T) {
	provider := newScripted(t,
		scripted.Rule{Prefix: "confirm", ToolCalls: []scripted.ToolCall{{Name: "confirm", Arguments: json.RawMessage(`{"q":"ok?"}`)}}},
		scripted.Rule{AfterTool: "confirm", Reply: "answered: {{.ToolResult}}"},
	)
	eng, err := loop.New(loop.Config{Provider: provider, AgentID: agentID})
	if err != nil {
		t.Fatal(err)
	}
	user := model.NewText(model.RoleUser, "confirm the order")
	user.Metadata = map[string]any{engine.MetadataClientTools: []any{map[string]any{"name": "confirm", "description": "ask the person"}}}
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, user)

	park := engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})
	var asked []model.ToolCall
	h := enginetest.NewRecordingHost()
	h.AskUserFn = func(_ context.Context, p engine.UserPrompt) (engine.UserReply, error) {
		asked = engine.PendingClientToolCalls(p.Parts)
		return engine.UserReply{}, park
	}
	run := engine.Run{ID: "run-client"}
	if _, err := eng.Execute(context.Background(), run, h, board); !errors.As(err, new(engine.InterruptedError)) {
		t.Fatalf("Execute: %v, want the park interrupt", err)
	}
	if len(asked) != 1 || asked[0].Name != "confirm" || string(asked[0].Arguments) != `{"q":"ok?"}` {
		t.Fatalf("asked for %+v, want the confirm call", asked)
	}
	cps := h.Checkpoints()
	cp := cps[len(cps)-1]

	results, err := engine.ClientToolResultsPart([]model.ToolResult{{ToolCallID: asked[0].ID, Name: "confirm", Content: "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	h2 := enginetest.NewRecordingHost()
	h2.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{Parts: []model.Part{results}}, nil
	}
	run.ResumeFrom = &cp
	out, err := eng.Execute(context.Background(), run, h2, engine.NewBoard())
	if err != nil {
		t.Fatalf("resumed Execute: %v", err)
	}
	final := out.Channel(engine.MainChannel)
	if got := final[len(final)-1].Text(); got != "answered: yes" {
		t.Fatalf("answer %q", got)
	}

	// Without the client's offer the same call is refused, not asked.
	plain := engine.NewBoard()
	plain.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "confirm the order"))
	h3 := enginetest.NewRecordingHost()
	h3.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		t.Error("asked the user for a tool nobody offered")
		return engine.UserReply{}, park
	}
	out, err = eng.Execute(context.Background(), engine.Run{ID: "run-plain"}, h3, plain)
	if err != nil {
		t.Fatalf("Execute without the offer: %v", err)
	}
	for _, m := range out.Channel(engine.MainChannel) {
		for _, p := range m.Parts {
			if p.ToolResult != nil && !p.ToolResult.IsError {
				t.Errorf("the unoffered call got a result %q", p.ToolResult.Content)
			}
		}
	}
}
