package agentproto

import (
	"encoding/json"
	"fmt"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// lcMessage is a message in LangChain's serialised form, as LangGraph
// clients read and write it (type human, ai, tool or system).
type lcMessage struct {
	Type             string         `json:"type"`
	Content          any            `json:"content"`
	ID               string         `json:"id,omitempty"`
	Name             string         `json:"name,omitempty"`
	ToolCalls        []lcToolCall   `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	Status           string         `json:"status,omitempty"`
	AdditionalKwargs map[string]any `json:"additional_kwargs"`
	ResponseMetadata map[string]any `json:"response_metadata"`
}

type lcToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	Type string          `json:"type"`
}

// toLC converts a transcript message. Data parts (a prompt's schema, a
// flow's node) travel in additional_kwargs.data.
func toLC(m model.Message) lcMessage {
	out := lcMessage{ID: m.ID, Name: m.Name, AdditionalKwargs: map[string]any{}, ResponseMetadata: map[string]any{}}
	var text strings.Builder
	var data []json.RawMessage
	for _, p := range m.Parts {
		switch {
		case p.Type == model.PartText:
			text.WriteString(p.Text)
		case p.ToolCall != nil:
			out.ToolCalls = append(out.ToolCalls, lcToolCall{ID: p.ToolCall.ID, Name: p.ToolCall.Name, Args: argsOf(p.ToolCall.Arguments), Type: "tool_call"})
		case p.ToolResult != nil:
			out.ToolCallID, out.Name = p.ToolResult.ToolCallID, p.ToolResult.Name
			text.WriteString(p.ToolResult.Content)
			if p.ToolResult.IsError {
				out.Status = "error"
			}
		case len(p.Data) > 0:
			data = append(data, p.Data)
		}
	}
	out.Content = text.String()
	if len(data) > 0 {
		out.AdditionalKwargs["data"] = data
	}
	switch m.Role {
	case model.RoleUser:
		out.Type = "human"
	case model.RoleTool:
		out.Type = "tool"
	case model.RoleSystem:
		out.Type = "system"
	default:
		out.Type = "ai"
		if out.ToolCalls == nil {
			out.ToolCalls = []lcToolCall{}
		}
	}
	return out
}

func argsOf(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

func toLCAll(msgs []model.Message) []lcMessage {
	out := make([]lcMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, toLC(m))
	}
	return out
}

// inMessage is a message a client sends: LangChain's form (type) or the
// OpenAI-like form (role), content a string or a list of content blocks.
type inMessage struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	ID      string          `json:"id"`
}

// userMessage returns the message a run's input carries to the agent: the
// last human message of input.messages. The earlier messages of the list
// are the client's view of the thread, which the thread already holds.
func userMessage(input json.RawMessage) (model.Message, error) {
	if len(input) == 0 || string(input) == "null" {
		return model.Message{}, badInput("input", "is required (or give command.resume)")
	}
	var in struct {
		Messages []inMessage `json:"messages"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.Messages == nil {
		return model.Message{}, badInput("input.messages", "want a list of messages, such as [{\"role\": \"user\", \"content\": \"hi\"}]")
	}
	for i := len(in.Messages) - 1; i >= 0; i-- {
		m := in.Messages[i]
		kind := m.Type
		if kind == "" {
			kind = m.Role
		}
		if kind != "human" && kind != "user" {
			continue
		}
		text, err := contentText(m.Content)
		if err != nil {
			return model.Message{}, badInput(fmt.Sprintf("input.messages[%d].content", i), "%v", err)
		}
		msg := model.NewText(model.RoleUser, text)
		msg.ID = m.ID
		return msg, nil
	}
	return model.Message{}, badInput("input.messages", "holds no human (user) message")
}

// contentText reads a message's content: a string, or content blocks of
// which the text blocks are joined.
func contentText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", errdefs.Validationf("want a string or a list of content blocks")
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String(), nil
}
