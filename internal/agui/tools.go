package agui

import (
	"encoding/json"
	"fmt"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// MetadataClientTools is the run metadata key under which the frontend
// tools of RunAgentInput.tools reach the engine (engine.ClientTools).
const MetadataClientTools = engine.MetadataClientTools

// MetadataToolMessageIDs records, on the message that carries frontend
// tool results, the client's id of each tool message (by call id): the
// thread's snapshot shows them under the ids the client knows.
const MetadataToolMessageIDs = "ag_ui_tool_message_ids"

// lastRole is the role of the input's last message.
func (in RunAgentInput) lastRole() string {
	if len(in.Messages) == 0 {
		return ""
	}
	return in.Messages[len(in.Messages)-1].Role
}

// messageMetadata is the metadata of the message an input sends: the
// AG-UI run it opens and the frontend tools the client offers with it
// (the loop engine reads them from the board: engine.MetadataClientTools).
func (in RunAgentInput) messageMetadata() map[string]any {
	md := map[string]any{MetadataRunID: in.RunID}
	if len(in.Tools) > 0 {
		tools := make([]engine.ClientTool, len(in.Tools))
		for i, t := range in.Tools {
			tools[i] = engine.ClientTool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		}
		md[MetadataClientTools] = tools
	}
	return md
}

// runMetadata is what a new run keeps of the input besides its message:
// the context and the forwarded properties.
func (in RunAgentInput) runMetadata() map[string]any {
	md := map[string]any{}
	if len(in.Context) > 0 {
		md["ag_ui_context"] = in.Context
	}
	if len(in.ForwardedProps) > 0 && string(in.ForwardedProps) != "null" && string(in.ForwardedProps) != "{}" {
		md["ag_ui_forwarded_props"] = in.ForwardedProps
	}
	if len(md) == 0 {
		return nil
	}
	return md
}

// toolResults is the answer of the input's trailing tool messages to the
// frontend tool calls a run parked on.
func (in RunAgentInput) toolResults(runID string, prompt model.Message) (model.Message, error) {
	calls := engine.PendingClientToolCalls(prompt.Parts)
	if len(calls) == 0 {
		return model.Message{}, errdefs.WithField("messages", errdefs.Conflictf("the thread's run waits for an answer to its interrupts, not for tool results; send resume entries"))
	}
	byID := map[string]model.ToolCall{}
	for _, c := range calls {
		byID[ToolCallIDOf(runID, c.ID)] = c
	}
	var results []model.ToolResult
	ids := map[string]any{} // call id → the client's message id
	for i := len(in.Messages) - 1; i >= 0 && in.Messages[i].Role == "tool"; i-- {
		m := in.Messages[i]
		c, ok := byID[m.ToolCallID]
		if !ok {
			return model.Message{}, errdefs.WithField(fmt.Sprintf("messages[%d].toolCallId", i), errdefs.Validationf("%q is not a pending tool call of this thread", m.ToolCallID))
		}
		content, err := toolContent(m.Content)
		if err != nil {
			return model.Message{}, errdefs.WithField(fmt.Sprintf("messages[%d].content", i), err)
		}
		results = append([]model.ToolResult{{ToolCallID: c.ID, Name: c.Name, Content: content, IsError: m.Error != ""}}, results...)
		ids[c.ID] = m.ID
	}
	part, err := engine.ClientToolResultsPart(results)
	if err != nil {
		return model.Message{}, err
	}
	return model.Message{Role: model.RoleUser, Parts: []model.Part{part}, Metadata: map[string]any{MetadataToolMessageIDs: ids}}, nil
}

// toolContent is a tool message's content as text.
func toolContent(content json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", errdefs.Validationf("must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}
