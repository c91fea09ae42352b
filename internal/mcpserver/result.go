package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// The _meta keys of results and progress notifications.
const (
	metaRunID     = "agentd/run_id"
	metaContextID = "agentd/context_id"
	metaStatus    = "agentd/status"
)

// result is the tool result of a run that ended or waits for the caller.
func (c *call) result(task run.Task, msgs []model.Message) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Meta: mcp.Meta{
		metaRunID: task.ID, metaContextID: task.ContextID, metaStatus: string(task.State),
	}}
	switch task.State {
	case run.StateCompleted:
		c.answer(res, lastAnswer(msgs))
	case run.StateInputRequired, run.StateAuthRequired:
		res.Content = text(waiting(c.t.def.Name, task))
	case run.StateCanceled:
		res.IsError, res.Content = true, text("The run "+task.ID+" was canceled.")
	default: // failed, rejected
		msg := "The run " + task.ID + " " + string(task.State)
		if task.Error != nil && task.Error.Message != "" {
			msg += ": " + task.Error.Message
		} else if t := promptText(task); t != "" {
			msg += ": " + t
		}
		res.IsError, res.Content = true, text(msg)
	}
	return res
}

// answer fills res from the agent's answer: its text parts, and its data
// parts as JSON text — the first of them the structured content when the
// agent declares a response schema.
func (c *call) answer(res *mcp.CallToolResult, m *model.Message) {
	if m == nil {
		res.Content = []mcp.Content{}
		return
	}
	for _, p := range m.Parts {
		switch p.Type {
		case model.PartText:
			res.Content = append(res.Content, &mcp.TextContent{Text: p.Text})
		case model.PartData:
			if c.t.structured && res.StructuredContent == nil {
				res.StructuredContent = json.RawMessage(p.Data)
			}
			res.Content = append(res.Content, &mcp.TextContent{Text: string(p.Data)})
		}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
}

// lastAnswer is the run's last assistant message.
func lastAnswer(msgs []model.Message) *model.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			return &msgs[i]
		}
	}
	return nil
}

// waiting tells a caller that could not be asked (no elicitation) what
// the run waits for and how to answer it.
func waiting(toolName string, task run.Task) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "The run %s waits for input", task.ID)
	if t := promptText(task); t != "" {
		sb.WriteString(": " + t)
	}
	for _, p := range pendingApprovals(task) {
		fmt.Fprintf(&sb, "\n- pending tool call %s(%s)", p.Tool, p.Arguments)
	}
	fmt.Fprintf(&sb, "\nAnswer it by calling %s again with {\"run_id\": %q, \"message\": …}", toolName, task.ID)
	if len(pendingApprovals(task)) > 0 {
		sb.WriteString(` ("approve" or "reject")`)
	}
	fmt.Fprintf(&sb, ", or on any other face (POST /v1/runs/%s/input, or an A2A message with taskId %s).", task.ID, task.ID)
	return sb.String()
}

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

// toolError is the tool error of a call whose arguments are wrong: it
// names the argument, and nothing ran.
func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: text(err.Error())}
}

// runError is the tool error of a call the runtime refused or could not
// serve; the message of an internal or unavailable one stays in the log.
func (c *call) runError(err error) *mcp.CallToolResult {
	if !errdefs.IsPublic(err) {
		c.s.opts.Logger.Warn("mcp: tool call", "tool", c.t.def.Name, "run", c.runID, "err", err)
	}
	res := &mcp.CallToolResult{IsError: true, Content: text(errdefs.ClientText(err))}
	if c.runID != "" {
		res.Meta = mcp.Meta{metaRunID: c.runID}
	}
	return res
}
