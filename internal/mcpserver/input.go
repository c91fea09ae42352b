package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// Input: a run that waits for the caller (run.StateInputRequired) asks
// it through MCP elicitation, when the client declared it — with a request
// of the server's own on a legacy session (elicitation/create), or, on the
// sessionless protocol, as input requests the client answers by retrying
// the call (SEP-2322), the run id being the request state. A prompt asks
// for an answer (a string); an approval prompt for a decision on all its
// pending tool calls (approve: true or false, and a reason). Accepting
// sends the answer into the run as its input, as POST /v1/runs/{id}/input
// would; declining an approval rejects the calls; declining (or
// cancelling) any other prompt cancels the run.

// inputKey names the input request of task's prompt: one per attempt
// (an answer resumes the run in a new attempt), so that a key never names
// two prompts of a task (SEP-2663 asks it of task input requests).
func inputKey(task run.Task) string { return fmt.Sprintf("agentd_input_%d", task.Attempt) }

// elicitParams is the elicitation of task's prompt.
func elicitParams(task run.Task) *mcp.ElicitParams {
	prompt := promptText(task)
	if pending := pendingApprovals(task); len(pending) > 0 {
		var sb strings.Builder
		sb.WriteString("Approve these tool calls?")
		for _, p := range pending {
			fmt.Fprintf(&sb, "\n- %s(%s)", p.Tool, p.Arguments)
			if p.Reason != "" {
				sb.WriteString(": " + p.Reason)
			}
		}
		return &mcp.ElicitParams{Mode: "form", Message: sb.String(), RequestedSchema: approvalSchema}
	}
	if prompt == "" {
		prompt = "The agent asks for more input."
	}
	return &mcp.ElicitParams{Mode: "form", Message: prompt, RequestedSchema: answerSchema(prompt)}
}

var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Run the tool calls (true) or reject them (false)."},
		"reason":  map[string]any{"type": "string", "title": "Reason", "description": "Why (the agent reads it when the calls are rejected)."},
	},
	"required": []string{"approve"},
}

func answerSchema(prompt string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"answer": map[string]any{"type": "string", "title": "Answer", "description": prompt},
		},
		"required": []string{"answer"},
	}
}

func pendingApprovals(task run.Task) []engine.ApprovalRequest {
	if task.StatusMessage == nil {
		return nil
	}
	return engine.PendingApprovals(task.StatusMessage.Parts)
}

func promptText(task run.Task) string {
	if task.StatusMessage == nil {
		return ""
	}
	return task.StatusMessage.Text()
}

// elicit asks a legacy session's client and returns the run's input; nil
// when the user declined or cancelled a prompt that is not an approval.
func (c *call) elicit(ctx context.Context, task run.Task) (*model.Message, error) {
	res, err := c.req.Session.Elicit(ctx, elicitParams(task))
	if err != nil {
		return nil, err
	}
	return answerOf(task, res)
}

// inputRequest is the input-required result of the sessionless protocol:
// the client answers the elicitation and retries with the run id.
func inputRequest(task run.Task) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Meta:          mcp.Meta{metaRunID: task.ID, metaContextID: task.ContextID, metaStatus: string(task.State)},
		InputRequests: mcp.InputRequestMap{inputKey(task): elicitParams(task)},
		RequestState:  task.ID,
	}
}

// retry continues a call whose run waited for the answer the retry
// carries. The request state is the run id, which the caller could use on
// every other face too: it grants nothing more (the run is looked up in
// the caller's tenant).
func (c *call) retry(ctx context.Context) (*mcp.CallToolResult, error) {
	c.runID = c.req.Params.RequestState
	task, err := c.s.rt.GetTask(ctx, c.runID)
	if err != nil {
		return c.failed(ctx, err)
	}
	if task.AgentID != c.t.agentID {
		return toolError(argErrorf("requestState: run %s is not a run of agent %s", task.ID, c.t.agentID)), nil
	}
	res, ok := c.req.Params.InputResponses[inputKey(task)].(*mcp.ElicitResult)
	if !ok {
		return toolError(argErrorf("inputResponses.%s: required, the answer to the elicitation", inputKey(task))), nil
	}
	answer, err := answerOf(task, res)
	if err != nil {
		return toolError(err), nil
	}
	if answer == nil {
		return c.cancel(ctx)
	}
	return c.send(ctx, runtime.SendRequest{AgentID: c.t.agentID, TaskID: task.ID, Message: *answer})
}

// answerOf is the run's input from the user's elicitation result.
func answerOf(task run.Task, res *mcp.ElicitResult) (*model.Message, error) {
	pending := pendingApprovals(task)
	if len(pending) == 0 {
		if res.Action != "accept" {
			return nil, nil
		}
		text, _ := res.Content["answer"].(string)
		if text == "" {
			return nil, argErrorf("elicitation: the answer is empty")
		}
		m := model.NewText(model.RoleUser, text)
		return &m, nil
	}
	approve, _ := res.Content["approve"].(bool)
	if res.Action == "cancel" {
		return nil, nil
	}
	decision := engine.DecisionReject
	if res.Action == "accept" && approve {
		decision = engine.DecisionApprove
	}
	reason, _ := res.Content["reason"].(string)
	if decision == engine.DecisionReject && reason == "" {
		reason = "rejected by the MCP client's user"
	}
	answers := make([]engine.ApprovalAnswer, len(pending))
	for i, p := range pending {
		answers[i] = engine.ApprovalAnswer{CallID: p.CallID, Decision: decision, Reason: reason}
	}
	part, err := model.DataPart(map[string]any{"approvals": answers})
	if err != nil {
		return nil, err
	}
	return &model.Message{Role: model.RoleUser, Parts: []model.Part{part}}, nil
}
