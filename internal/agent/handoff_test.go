package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

func handoffs() []agent.Handoff {
	return []agent.Handoff{
		{ToAgentID: "billing", Description: "Refunds, invoices, plans"},
		{ToAgentID: "Tech Support", ToolName: "escalate"},
	}
}

func assistant(parts ...model.Part) model.Message {
	return model.Message{Role: model.RoleAssistant, Parts: parts}
}

func toolResult(id, content string, isErr bool) model.Message {
	return model.Message{Role: model.RoleTool, Parts: []model.Part{
		model.ToolResultPart(model.ToolResult{ToolCallID: id, Content: content, IsError: isErr}),
	}}
}

func call(id, name, args string) model.Part {
	return model.ToolCallPart(model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)})
}

func TestHandoffDecider(t *testing.T) {
	cases := []struct {
		name string
		msgs []model.Message
		want *agent.HandoffEvent
	}{
		{"no hand-off", []model.Message{
			assistant(call("c1", "lookup", `{}`)), toolResult("c1", "ok", false), assistant(model.TextPart("done")),
		}, nil},
		{"hand-off in an earlier tool round, then more assistant messages", []model.Message{
			assistant(call("c1", "lookup", `{}`)),
			toolResult("c1", "order 1234", false),
			assistant(model.TextPart("Transferring you."), call("c2", "transfer_to_billing", `{"reason":"refund","note":"order 1234"}`)),
			toolResult("c2", "Transferring the conversation to billing.", false),
			assistant(model.TextPart("Billing will take it from here.")),
			assistant(model.TextPart("Anything else?")),
		}, &agent.HandoffEvent{ToAgentID: "billing", ToolName: "transfer_to_billing", ToolCallID: "c2",
			Args: agent.HandoffArgs{Reason: "refund", Note: "order 1234"}}},
		{"first hand-off wins", []model.Message{
			assistant(call("c1", "escalate", `{}`), call("c2", "transfer_to_billing", `{}`)),
			toolResult("c1", "ok", false), toolResult("c2", "ok", false),
			assistant(call("c3", "transfer_to_billing", `{}`)),
		}, &agent.HandoffEvent{ToAgentID: "Tech Support", ToolName: "escalate", ToolCallID: "c1"}},
		{"a failed hand-off call is skipped", []model.Message{
			assistant(call("c1", "transfer_to_billing", `{"bogus":1}`)),
			toolResult("c1", "transfer_to_billing: bad arguments", true),
			assistant(call("c2", "escalate", `{"reason":"bug"}`)),
		}, &agent.HandoffEvent{ToAgentID: "Tech Support", ToolName: "escalate", ToolCallID: "c2",
			Args: agent.HandoffArgs{Reason: "bug"}}},
		{"a call without a result in the turn counts", []model.Message{
			assistant(call("c1", "transfer_to_billing", `not json`)),
		}, &agent.HandoffEvent{ToAgentID: "billing", ToolName: "transfer_to_billing", ToolCallID: "c1"}},
	}
	d := agent.HandoffDecider(handoffs())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := &agent.Result{Status: agent.StatusCompleted, Messages: tc.msgs}
			dec, err := d.BeforeFinalize(context.Background(), agent.RunInfo{}, &agent.Request{}, res)
			if err != nil {
				t.Fatal(err)
			}
			if res.State != nil {
				t.Error("the decider wrote into the Result")
			}
			got, ok := dec.State[agent.HandoffStateKey].(agent.HandoffEvent)
			if tc.want == nil {
				if ok || dec.Reason != "" {
					t.Fatalf("decision = %+v, want none", dec)
				}
				return
			}
			if !ok || got != *tc.want {
				t.Fatalf("event = %+v, want %+v", got, *tc.want)
			}
			if dec.Reason != agent.HandoffFinalizeReason+tc.want.ToAgentID || dec.DiscardOutput || dec.Revise {
				t.Errorf("decision = %+v", dec)
			}
		})
	}
}

func TestHandoffThroughRun(t *testing.T) {
	eng := engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		b.AppendChannelMessage(engine.MainChannel, assistant(call("c9", "transfer_to_billing", `{"note":"vip"}`)))
		b.AppendChannelMessage(engine.MainChannel, toolResult("c9", "ok", false))
		b.AppendChannelMessage(engine.MainChannel, assistant(model.TextPart("Over to billing.")))
		return b, nil
	})
	// The user's own text names the tool: history is not output, so it must
	// not be mistaken for a call.
	res, err := agent.Run(context.Background(), hooked(supportAgent(), nil, agent.HandoffDecider(handoffs())), eng,
		userRequest("transfer_to_billing please"))
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := agent.HandoffFromResult(res)
	if !ok || ev.ToAgentID != "billing" || ev.ToolCallID != "c9" || ev.Args.Note != "vip" {
		t.Fatalf("HandoffFromResult = %+v, %v", ev, ok)
	}
	if res.State[agent.FinalizeReasonStateKey] != "handoff:billing" || !res.Committed {
		t.Errorf("state = %v, committed = %v", res.State, res.Committed)
	}
}

func TestHandoffFromResult(t *testing.T) {
	ev := agent.HandoffEvent{ToAgentID: "billing"}
	cases := []struct {
		name string
		res  *agent.Result
		ok   bool
	}{
		{"nil result", nil, false},
		{"nil state", &agent.Result{}, false},
		{"value", &agent.Result{State: map[string]any{agent.HandoffStateKey: ev}}, true},
		{"pointer", &agent.Result{State: map[string]any{agent.HandoffStateKey: &ev}}, true},
		{"nil pointer", &agent.Result{State: map[string]any{agent.HandoffStateKey: (*agent.HandoffEvent)(nil)}}, false},
		{"other type", &agent.Result{State: map[string]any{agent.HandoffStateKey: "billing"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := agent.HandoffFromResult(tc.res)
			if ok != tc.ok || (ok && got != ev) {
				t.Fatalf("HandoffFromResult = %+v, %v; want ok = %v", got, ok, tc.ok)
			}
		})
	}
}

func TestDefaultHandoffToolName(t *testing.T) {
	cases := map[string]string{
		"billing":               "transfer_to_billing",
		"Tech Support":          "transfer_to_tech_support",
		"agent-2.eu":            "transfer_to_agent_2_eu",
		"Ünïcode":               "transfer_to__n_code",
		strings.Repeat("a", 80): "transfer_to_" + strings.Repeat("a", 52),
	}
	for in, want := range cases {
		if got := agent.DefaultHandoffToolName(in); got != want {
			t.Errorf("DefaultHandoffToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHandoffToolThroughRegistry(t *testing.T) {
	var invoked []agent.HandoffArgs
	hs := []agent.Handoff{
		{ToAgentID: "billing", OnInvoke: func(_ context.Context, a agent.HandoffArgs) error {
			invoked = append(invoked, a)
			return nil
		}},
		{ToAgentID: "tech", Description: "Bugs", OnInvoke: func(context.Context, agent.HandoffArgs) error {
			return errdefs.Forbiddenf("tech is closed")
		}},
		{ToAgentID: "vip", Filter: func(_ context.Context, req *agent.Request) bool { return req.Inputs["tier"] == "gold" }},
	}
	var reg tool.Registry
	for _, tl := range agent.HandoffTools(context.Background(), &agent.Request{}, hs) {
		if err := reg.Register(tl); err != nil {
			t.Fatalf("Register(%s): %v", tl.Name(), err)
		}
	}
	if _, ok := reg.Get("transfer_to_vip"); ok {
		t.Error("the filtered hand-off was offered")
	}
	if all := agent.HandoffTools(context.Background(), nil, hs); len(all) != 3 {
		t.Errorf("a nil request offered %d tools, want all 3", len(all))
	}
	billing, _ := reg.Get("transfer_to_billing")
	if billing.Description() != "Transfer the conversation to billing." {
		t.Errorf("default description = %q", billing.Description())
	}
	ctx := context.Background()
	res := reg.Execute(ctx, tool.Call{ID: "c1", Name: "transfer_to_billing", Arguments: json.RawMessage(`{"reason":"refund"}`)})
	if res.IsError || len(invoked) != 1 || invoked[0].Reason != "refund" {
		t.Errorf("billing call = %+v, invoked %+v", res, invoked)
	}
	res = reg.Execute(ctx, tool.Call{ID: "c2", Name: "transfer_to_billing", Arguments: json.RawMessage(`{"target":"x"}`)})
	if !res.IsError || len(invoked) != 1 {
		t.Errorf("a call with unknown arguments = %+v; want an error result without OnInvoke", res)
	}
	res = reg.Execute(ctx, tool.Call{ID: "c3", Name: "transfer_to_tech", Arguments: json.RawMessage(`{}`)})
	if !res.IsError || !errdefs.IsForbidden(res.Err) {
		t.Errorf("a failing OnInvoke = %+v; want an error result carrying its error", res)
	}
}

func TestHandoffToolDirectExecute(t *testing.T) {
	tl := agent.HandoffTool(agent.Handoff{ToAgentID: "billing"})
	if res, err := tl.Execute(context.Background(), nil); err != nil || res.Content == "" {
		t.Errorf("Execute(no args) = %+v, %v", res, err)
	}
	if _, err := tl.Execute(context.Background(), json.RawMessage(`[`)); !errdefs.IsValidation(err) {
		t.Errorf("Execute(bad JSON) err = %v, want Validation", err)
	}
}

func TestHandoffPanicsWithoutDestination(t *testing.T) {
	for name, fn := range map[string]func(){
		"HandoffTool":    func() { agent.HandoffTool(agent.Handoff{}) },
		"HandoffDecider": func() { agent.HandoffDecider([]agent.Handoff{{}}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			fn()
		})
	}
}
