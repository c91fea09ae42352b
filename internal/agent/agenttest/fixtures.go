package agenttest

import (
	"context"
	"fmt"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// fixture is one (Request, Result) pair a check feeds to an
// implementation. Each call of fixtures builds fresh values, so a check
// can never see another check's mutation.
type fixture struct {
	name string
	info agent.RunInfo
	req  *agent.Request
	res  *agent.Result
}

// fixtures covers the shapes Run produces: every status, tool rounds with
// hand-off calls, artifacts, pre-filled state and a live board.
func fixtures() []fixture {
	info := agent.RunInfo{AgentID: "support", RunID: "run-1", TaskID: "task-1", ContextID: "ctx-1"}
	req := func() *agent.Request {
		return &agent.Request{
			TaskID: info.TaskID, ContextID: info.ContextID, RunID: info.RunID,
			Message: model.NewText(model.RoleUser, "I need a refund"),
			Inputs:  map[string]any{"tier": "gold", "limits": map[string]any{"max": 3.0}},
			Config:  &agent.RequestConfig{AcceptedOutputModes: []string{"text/plain"}},
		}
	}
	result := func(status agent.Status, err error, cause engine.Cause) *agent.Result {
		msgs := turnMessages()
		board := engine.NewBoard()
		board.AppendChannelMessage(engine.MainChannel, req().Message)
		for _, m := range msgs {
			board.AppendChannelMessage(engine.MainChannel, m)
		}
		board.SetVar("tier", "gold")
		board.AppendChannelMessage("summary", model.NewText(model.RoleAssistant, "refund requested"))
		return &agent.Result{
			TaskID: info.TaskID, ContextID: info.ContextID, RunID: info.RunID,
			Status: status, Cause: cause, Err: err,
			Messages:  msgs,
			Committed: status == agent.StatusCompleted,
			State:     map[string]any{"existing": "value", "nested": map[string]any{"n": 1.0}},
			LastBoard: board,
			Attempts:  1,
		}
	}
	return []fixture{
		{"completed", info, req(), result(agent.StatusCompleted, nil, "")},
		{"interrupted-barge-in", info, req(), result(agent.StatusInterrupted,
			engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserInput}), engine.CauseUserInput)},
		{"interrupted-user-cancel", info, req(), result(agent.StatusInterrupted,
			engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserCancel, Detail: "stop"}), engine.CauseUserCancel)},
		{"canceled", info, req(), result(agent.StatusCanceled, fmt.Errorf("model call: %w", context.Canceled), "")},
		{"aborted", info, req(), result(agent.StatusAborted, errdefs.Abortedf("halted"), "")},
		{"failed", info, req(), result(agent.StatusFailed, errdefs.BudgetExceededf("token budget spent"), "")},
		{"revised", info, req(), func() *agent.Result {
			r := result(agent.StatusCompleted, nil, "")
			r.Attempts = 2
			return r
		}()},
	}
}

// turnMessages is a turn with a tool round that hands off, followed by more
// assistant text — the shape a hand-off detector must not miss.
func turnMessages() []model.Message {
	call := model.ToolCall{ID: "call-1", Name: "transfer_to_billing", Arguments: []byte(`{"reason":"refund"}`)}
	lookup := model.ToolCall{ID: "call-0", Name: "lookup_order", Arguments: []byte(`{"id":"1234"}`)}
	return []model.Message{
		{Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(lookup)}},
		{Role: model.RoleTool, Parts: []model.Part{model.ToolResultPart(model.ToolResult{ToolCallID: "call-0", Content: "order 1234"})}},
		{Role: model.RoleAssistant, Parts: []model.Part{model.TextPart("Let me transfer you."), model.ToolCallPart(call)}},
		{Role: model.RoleTool, Parts: []model.Part{model.ToolResultPart(model.ToolResult{ToolCallID: "call-1", Content: "ok"})}},
		{Role: model.RoleAssistant, Parts: []model.Part{model.TextPart("Billing will take it from here.")},
			Metadata: map[string]any{"model": "scripted"}},
	}
}
