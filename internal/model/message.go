package model

import (
	"slices"
	"time"
)

// Role says who authored a message.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the defined roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return true
	}
	return false
}

// MetaResponseKind is the metadata key of a final assistant message whose
// value "message" asks protocol faces to answer with the message itself
// rather than with the task (A2A's Message response).
const MetaResponseKind = "agentd.response"

// Message is one turn of a conversation.
type Message struct {
	// ID identifies the message; a client-supplied ID on a user message is
	// the idempotency key of the submission.
	ID    string `json:"id,omitempty"`
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
	// Name optionally names the author (an agent id, a tool name).
	Name      string         `json:"name,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	CreatedAt time.Time      `json:"created_at,omitzero"`
}

// NewText returns a message with a single text part.
func NewText(role Role, text string) Message {
	return Message{Role: role, Parts: []Part{TextPart(text)}}
}

// Text concatenates the message's text parts.
func (m Message) Text() string {
	switch len(m.Parts) {
	case 0:
		return ""
	case 1:
		return m.Parts[0].Text
	}
	var n int
	for _, p := range m.Parts {
		n += len(p.Text)
	}
	b := make([]byte, 0, n)
	for _, p := range m.Parts {
		if p.Type == PartText {
			b = append(b, p.Text...)
		}
	}
	return string(b)
}

// ToolCalls returns the tool-call parts of the message, in order.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Parts {
		if p.Type == PartToolCall && p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// Clone returns a deep copy of m.
func (m Message) Clone() Message {
	out := m
	if m.Parts != nil {
		out.Parts = make([]Part, len(m.Parts))
		for i, p := range m.Parts {
			out.Parts[i] = p.Clone()
		}
	}
	out.Metadata = cloneMap(m.Metadata)
	return out
}

// Artifact is an output of a run that is not a conversational turn: a file,
// a document, structured data, or the streamed answer itself.
type Artifact struct {
	ID          string         `json:"id"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// TokenUsage counts the tokens of one or more model calls.
type TokenUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// ModelNames appends the model names of byModel (usage by model) to dst,
// sorted. A caller that passes a small array's slice as dst allocates
// nothing for a run of one model, the common case.
func ModelNames(dst []string, byModel map[string]TokenUsage) []string {
	for name := range byModel {
		dst = append(dst, name)
	}
	slices.Sort(dst)
	return dst
}

// Add returns the sum of u and v. A zero TotalTokens is derived from the
// input and output counts so providers that omit it still add up.
func (u TokenUsage) Add(v TokenUsage) TokenUsage {
	return TokenUsage{
		InputTokens:  u.InputTokens + v.InputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens,
		TotalTokens:  u.total() + v.total(),
	}
}

func (u TokenUsage) total() int64 {
	if u.TotalTokens != 0 {
		return u.TotalTokens
	}
	return u.InputTokens + u.OutputTokens
}

// IsZero reports whether no tokens were counted.
func (u TokenUsage) IsZero() bool { return u == TokenUsage{} }
