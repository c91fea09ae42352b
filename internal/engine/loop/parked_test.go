package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// asker is a tool that, like a peer agent called as a tool, asks the user
// through the host: the first call parks the run (the host answers
// AskUser with an interrupt), the call made by the resumed attempt gets
// the reply. It records the idempotency key and the run id of each call.
type asker struct {
	mu   sync.Mutex
	keys []string
	runs []string
}

func (a *asker) tool() tool.Tool {
	return tool.New(tool.Spec{Name: "ask_peer", Description: "asks the user through the host"},
		func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			call, _ := tool.CallFromContext(ctx)
			run, _ := engine.RunIDFromContext(ctx)
			a.mu.Lock()
			a.keys, a.runs = append(a.keys, call.IdempotencyKey), append(a.runs, run)
			a.mu.Unlock()
			h, ok := engine.HostFromContext(ctx)
			if !ok {
				return tool.Result{}, errors.New("no host")
			}
			reply, err := h.AskUser(ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("name?")}})
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Text("hello " + reply.Text()), nil
		})
}

// TestToolParksTheRun: a tool stopped by the host's park interrupt leaves
// its call pending in the iteration's checkpoint and ends Execute with the
// interrupt; the resumed attempt runs the call again under the same
// idempotency key, before any model turn, and the run completes.
func TestToolParksTheRun(t *testing.T) {
	a := &asker{}
	reg := &tool.Registry{}
	if err := reg.Register(a.tool()); err != nil {
		t.Fatal(err)
	}
	provider := newScripted(t,
		scripted.Rule{Prefix: "greet", ToolCalls: []scripted.ToolCall{{Name: "ask_peer", Arguments: json.RawMessage(`{}`)}}},
		scripted.Rule{AfterTool: "ask_peer", Reply: "done: {{.ToolResult}}"},
	)
	eng, err := loop.New(loop.Config{Provider: provider, Tools: reg, ToolNames: []string{"ask_peer"}, AgentID: agentID})
	if err != nil {
		t.Fatal(err)
	}
	park := engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})
	h := enginetest.NewRecordingHost()
	h.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) { return engine.UserReply{}, park }
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "greet me"))
	run := engine.Run{ID: "run-park"}
	_, err = eng.Execute(context.Background(), run, h, board)
	var ie engine.InterruptedError
	if !errors.As(err, &ie) || ie.Detail != "input-required" {
		t.Fatalf("Execute: %v, want the park interrupt", err)
	}
	cps := h.Checkpoints()
	if len(cps) == 0 {
		t.Fatal("no checkpoint of the parked iteration")
	}
	cp := cps[len(cps)-1]
	msgs := cp.Board.Channels[engine.MainChannel]
	if last := msgs[len(msgs)-1]; last.Role != model.RoleAssistant || len(last.ToolCalls()) != 1 {
		t.Fatalf("checkpoint ends with %+v, want the pending call", last)
	}

	h2 := enginetest.NewRecordingHost()
	h2.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{Parts: []model.Part{model.TextPart("Ada")}}, nil
	}
	run.ResumeFrom = &cp
	out, err := eng.Execute(context.Background(), run, h2, engine.NewBoard())
	if err != nil {
		t.Fatalf("resumed Execute: %v", err)
	}
	final := out.Channel(engine.MainChannel)
	if got := final[len(final)-1].Text(); got != "done: hello Ada" {
		t.Fatalf("answer %q", got)
	}
	if len(a.keys) != 2 || a.keys[0] != a.keys[1] || a.keys[0] != loop.IdempotencyKey("run-park", 1, final[1].ToolCalls()[0].ID) {
		t.Fatalf("idempotency keys %q, want the same key twice", a.keys)
	}
	if a.runs[0] != "run-park" || a.runs[1] != "run-park" {
		t.Fatalf("run ids on the tool's context %q", a.runs)
	}
	results := 0
	for _, m := range final {
		for _, p := range m.Parts {
			if p.Type == model.PartToolResult {
				results++
			}
		}
	}
	if results != 1 {
		t.Fatalf("%d tool results on the board, want 1", results)
	}
}
