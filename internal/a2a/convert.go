package a2a

import (
	"encoding/json"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/model"
	"agentd/internal/run"
)

// toState maps a runtime task state to its A2A name.
func toState(s run.TaskState) a2a.TaskState {
	switch s {
	case run.StateSubmitted:
		return a2a.TaskStateSubmitted
	case run.StateWorking:
		return a2a.TaskStateWorking
	case run.StateInputRequired:
		return a2a.TaskStateInputRequired
	case run.StateAuthRequired:
		return a2a.TaskStateAuthRequired
	case run.StateCompleted:
		return a2a.TaskStateCompleted
	case run.StateFailed:
		return a2a.TaskStateFailed
	case run.StateCanceled:
		return a2a.TaskStateCanceled
	case run.StateRejected:
		return a2a.TaskStateRejected
	}
	return a2a.TaskStateUnspecified
}

// fromState maps an A2A state filter to the runtime's state; ok is false
// for unknown names.
func fromState(s a2a.TaskState) (run.TaskState, bool) {
	for _, st := range []run.TaskState{
		run.StateSubmitted, run.StateWorking, run.StateInputRequired, run.StateAuthRequired,
		run.StateCompleted, run.StateFailed, run.StateCanceled, run.StateRejected,
	} {
		if toState(st) == s {
			return st, true
		}
	}
	return "", false
}

// stamp is a timestamp as A2A wants it: UTC, millisecond precision.
func stamp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC().Truncate(time.Millisecond)
	return &u
}

// toMessage converts a transcript or status message. Assistant, tool and
// system authors all speak as the agent; A2A knows only user and agent.
func toMessage(m model.Message, taskID a2a.TaskID, contextID string) *a2a.Message {
	role := a2a.MessageRoleAgent
	if m.Role == model.RoleUser {
		role = a2a.MessageRoleUser
	}
	return &a2a.Message{
		ID: m.ID, Role: role, Parts: toParts(m.Parts), TaskID: taskID, ContextID: contextID,
		Metadata: m.Metadata,
	}
}

func toParts(ps []model.Part) a2a.ContentParts {
	out := make(a2a.ContentParts, 0, len(ps))
	for _, p := range ps {
		out = append(out, toPart(p))
	}
	return out
}

// toPart converts one part. Tool calls and results become data parts
// ({"toolCall": …} / {"toolResult": …}) so clients see them as structured
// data.
func toPart(p model.Part) *a2a.Part {
	out := &a2a.Part{MediaType: p.MediaType, Metadata: p.Metadata}
	switch p.Type {
	case model.PartText:
		out.Content = a2a.Text(p.Text)
	case model.PartData:
		out.Content = a2a.Data{Value: decodeData(p.Data)}
	case model.PartFile:
		out.Filename = p.File.Name
		if p.File.URL != "" {
			out.Content = a2a.URL(p.File.URL)
		} else {
			out.Content = a2a.Raw(p.File.Bytes)
		}
	case model.PartToolCall:
		out.Content = a2a.Data{Value: map[string]any{"toolCall": map[string]any{
			"id": p.ToolCall.ID, "name": p.ToolCall.Name, "arguments": decodeData(p.ToolCall.Arguments),
		}}}
	case model.PartToolResult:
		out.Content = a2a.Data{Value: map[string]any{"toolResult": map[string]any{
			"toolCallId": p.ToolResult.ToolCallID, "name": p.ToolResult.Name,
			"content": p.ToolResult.Content, "isError": p.ToolResult.IsError,
		}}}
	default:
		out.Content = a2a.Text("")
	}
	return out
}

// decodeData turns stored JSON into a value. v0.3 clients need objects as
// maps, which is why the raw bytes are not passed through.
func decodeData(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	return v
}

func toArtifact(a model.Artifact) *a2a.Artifact {
	return &a2a.Artifact{
		ID: a2a.ArtifactID(a.ID), Name: a.Name, Description: a.Description,
		Parts: toParts(a.Parts), Metadata: a.Metadata,
	}
}

// fromMessage converts a client's message into the runtime's vocabulary,
// naming the first field at fault when it cannot.
func fromMessage(m *a2a.Message) (model.Message, error) {
	if m == nil {
		return model.Message{}, invalidParams("message: required")
	}
	if m.ID == "" {
		return model.Message{}, invalidParams("message.messageId: required")
	}
	if m.Role != a2a.MessageRoleUser {
		return model.Message{}, invalidParams("message.role: must be %s, got %q", a2a.MessageRoleUser, m.Role)
	}
	if len(m.Parts) == 0 {
		return model.Message{}, invalidParams("message.parts: must not be empty")
	}
	out := model.Message{ID: m.ID, Role: model.RoleUser, Metadata: m.Metadata, Parts: make([]model.Part, 0, len(m.Parts))}
	for i, p := range m.Parts {
		mp, err := fromPart(p)
		if err != nil {
			return model.Message{}, invalidParams("message.parts[%d]: %v", i, err)
		}
		out.Parts = append(out.Parts, mp)
	}
	return out, nil
}

func fromPart(p *a2a.Part) (model.Part, error) {
	if p == nil {
		return model.Part{}, errPartEmpty
	}
	var out model.Part
	switch c := p.Content.(type) {
	case a2a.Text:
		out = model.TextPart(string(c))
	case a2a.Data:
		b, err := json.Marshal(c.Value)
		if err != nil {
			return model.Part{}, err
		}
		out = model.Part{Type: model.PartData, Data: b}
	case a2a.Raw:
		out = model.FileBytesPart(p.Filename, "", c)
	case a2a.URL:
		out = model.FileURLPart(p.Filename, "", string(c))
	default:
		return model.Part{}, errPartEmpty
	}
	if p.MediaType != "" {
		out.MediaType = p.MediaType
	}
	out.Metadata = p.Metadata
	if err := out.Validate(); err != nil {
		return model.Part{}, err
	}
	return out, nil
}

type partError string

func (e partError) Error() string { return string(e) }

const errPartEmpty = partError("a part needs exactly one of text, raw, url or data")
