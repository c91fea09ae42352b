package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// RunAgentInput is the body of an AG-UI run request.
type RunAgentInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	State           json.RawMessage `json:"state,omitempty"`
	Messages        []Message       `json:"messages"`
	Tools           []Tool          `json:"tools,omitempty"`
	Context         []ContextItem   `json:"context,omitempty"`
	ForwardedProps  json.RawMessage `json:"forwardedProps,omitempty"`
	Resume          []ResumeEntry   `json:"resume,omitempty"`
}

// Tool is a frontend tool the client offers.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ContextItem is a piece of ambient context for the run.
type ContextItem struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// roles are the message roles AG-UI defines.
var roles = map[string]bool{"developer": true, "system": true, "assistant": true, "user": true, "tool": true, "activity": true, "reasoning": true}

// decodeInput reads a RunAgentInput: the body must be one JSON object of
// the protocol's shape; an error names the member at fault.
func decodeInput(body io.Reader, limit int64) (RunAgentInput, error) {
	var in RunAgentInput
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return in, errdefs.Validationf("read request body: %v", err)
	}
	if int64(len(data)) > limit {
		return in, errdefs.Validationf("request body is larger than %d bytes", limit)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return in, errdefs.Validationf("request body must be a JSON object (RunAgentInput)")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return in, errdefs.WithField(te.Field, errdefs.Validationf("must be %s, got %s", jsonType(te.Type.Kind().String()), te.Value))
		}
		return in, errdefs.Validationf("request body is not valid JSON: %v", err)
	}
	return in, in.check(data)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return kind
}

// check validates the members decoding cannot.
func (in RunAgentInput) check(raw []byte) error {
	if strings.TrimSpace(in.ThreadID) == "" {
		return errdefs.WithField("threadId", errdefs.Validationf("required: the conversation's id"))
	}
	if strings.TrimSpace(in.RunID) == "" {
		return errdefs.WithField("runId", errdefs.Validationf("required: the run's id"))
	}
	var probe struct {
		Messages json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(raw, &probe)
	if len(probe.Messages) == 0 || string(probe.Messages) == "null" {
		return errdefs.WithField("messages", errdefs.Validationf("required: the conversation so far (an array, may be empty)"))
	}
	for i, m := range in.Messages {
		f := fmt.Sprintf("messages[%d]", i)
		if m.ID == "" {
			return errdefs.WithField(f+".id", errdefs.Validationf("required"))
		}
		if !roles[m.Role] {
			return errdefs.WithField(f+".role", errdefs.Validationf("must be one of developer, system, assistant, user, tool, activity or reasoning, got %q", m.Role))
		}
		if m.Role == "tool" && m.ToolCallID == "" {
			return errdefs.WithField(f+".toolCallId", errdefs.Validationf("required on a tool message"))
		}
	}
	for i, t := range in.Tools {
		if strings.TrimSpace(t.Name) == "" {
			return errdefs.WithField(fmt.Sprintf("tools[%d].name", i), errdefs.Validationf("required"))
		}
	}
	for i, e := range in.Resume {
		if e.InterruptID == "" {
			return errdefs.WithField(fmt.Sprintf("resume[%d].interruptId", i), errdefs.Validationf("required"))
		}
	}
	return nil
}

// userMessage is the message a run without resume entries starts with:
// the input's last message, which must be the user's.
func (in RunAgentInput) userMessage() (model.Message, error) {
	if len(in.Messages) == 0 {
		return model.Message{}, errdefs.WithField("messages", errdefs.Validationf("must end with the user's message (or carry resume entries)"))
	}
	i := len(in.Messages) - 1
	m := in.Messages[i]
	if m.Role != "user" {
		return model.Message{}, errdefs.WithField(fmt.Sprintf("messages[%d].role", i), errdefs.Validationf("the last message must be the user's, got %q", m.Role))
	}
	parts, err := contentParts(m.Content)
	if err != nil {
		return model.Message{}, errdefs.WithField(fmt.Sprintf("messages[%d].content", i), err)
	}
	return model.Message{ID: m.ID, Role: model.RoleUser, Parts: parts}, nil
}

// contentParts reads a user message's content: a string or text parts.
func contentParts(content json.RawMessage) ([]model.Part, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil, errdefs.Validationf("must not be blank")
		}
		return []model.Part{model.TextPart(s)}, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return nil, errdefs.Validationf("must be a string or an array of content parts")
	}
	var out []model.Part
	for j, p := range parts {
		if p.Type != "text" {
			return nil, errdefs.Validationf("[%d]: content part type %q is not supported (only text)", j, p.Type)
		}
		out = append(out, model.TextPart(p.Text))
	}
	if len(out) == 0 {
		return nil, errdefs.Validationf("must not be empty")
	}
	return out, nil
}

// text is a message content as one string.
func text(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
