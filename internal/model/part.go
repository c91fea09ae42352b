package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// PartType discriminates the content of a Part.
type PartType string

// The kinds of content a Part carries.
const (
	PartText       PartType = "text"
	PartData       PartType = "data"
	PartFile       PartType = "file"
	PartToolCall   PartType = "tool_call"
	PartToolResult PartType = "tool_result"
)

// Part is one piece of a message or artifact. Exactly the field named by
// Type is set; MediaType and Metadata are optional on every kind.
type Part struct {
	Type       PartType        `json:"type"`
	Text       string          `json:"text,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	File       *File           `json:"file,omitempty"`
	ToolCall   *ToolCall       `json:"tool_call,omitempty"`
	ToolResult *ToolResult     `json:"tool_result,omitempty"`
	MediaType  string          `json:"media_type,omitempty"`
	Metadata   map[string]any  `json:"metadata,omitempty"`
}

// File is a file given inline (Bytes) or by reference (URL); exactly one is
// set.
type File struct {
	Name  string `json:"name,omitempty"`
	Bytes []byte `json:"bytes,omitempty"`
	URL   string `json:"url,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolResult is the outcome of a tool call, paired with it by ToolCallID.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name,omitempty"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// DataPart returns a structured-data part holding v encoded as JSON.
func DataPart(v any) (Part, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Part{}, fmt.Errorf("data part: %w", err)
	}
	return Part{Type: PartData, Data: b, MediaType: "application/json"}, nil
}

// FileBytesPart returns a file part with inline content.
func FileBytesPart(name, mediaType string, b []byte) Part {
	return Part{Type: PartFile, File: &File{Name: name, Bytes: b}, MediaType: mediaType}
}

// FileURLPart returns a file part that refers to url.
func FileURLPart(name, mediaType, url string) Part {
	return Part{Type: PartFile, File: &File{Name: name, URL: url}, MediaType: mediaType}
}

// ToolCallPart returns a tool-call part.
func ToolCallPart(c ToolCall) Part { return Part{Type: PartToolCall, ToolCall: &c} }

// ToolResultPart returns a tool-result part.
func ToolResultPart(r ToolResult) Part { return Part{Type: PartToolResult, ToolResult: &r} }

// Validate reports whether the part is well formed: a known type whose
// content field is set, and no content field of another kind. The error is
// a *PartError naming the member at fault.
func (p Part) Validate() error {
	own, ok := contentField[p.Type]
	if !ok {
		return &PartError{Type: p.Type, Member: "type", Reason: fmt.Sprintf("unknown part type %q (want text, data, file, tool_call or tool_result)", p.Type)}
	}
	for _, c := range []struct {
		name string
		set  bool
	}{{"text", p.Text != ""}, {"data", len(p.Data) > 0}, {"file", p.File != nil}, {"tool_call", p.ToolCall != nil}, {"tool_result", p.ToolResult != nil}} {
		if c.set && c.name != own {
			return &PartError{Type: p.Type, Member: c.name, Reason: fmt.Sprintf("must not be set in a %s part (it carries only %q)", p.Type, own)}
		}
	}
	fail := func(member, reason string) error { return &PartError{Type: p.Type, Member: member, Reason: reason} }
	switch p.Type {
	case PartText:
		if p.Text == "" {
			return fail("text", "must not be empty")
		}
	case PartData:
		switch {
		case len(p.Data) == 0:
			return fail("data", "must not be empty")
		case !json.Valid(p.Data):
			return fail("data", "must be valid JSON")
		}
	case PartFile:
		switch {
		case p.File == nil:
			return fail("file", "must be set")
		case (len(p.File.Bytes) > 0) == (p.File.URL != ""):
			return fail("file", `must have exactly one of "bytes" or "url"`)
		}
	case PartToolCall:
		switch {
		case p.ToolCall == nil:
			return fail("tool_call", "must be set")
		case p.ToolCall.Name == "":
			return fail("tool_call.name", "must not be empty")
		}
	case PartToolResult:
		switch {
		case p.ToolResult == nil:
			return fail("tool_result", "must be set")
		case p.ToolResult.ToolCallID == "":
			return fail("tool_result.tool_call_id", "must not be empty")
		}
	}
	return nil
}

// contentField is the member that holds each part type's content.
var contentField = map[PartType]string{
	PartText:       "text",
	PartData:       "data",
	PartFile:       "file",
	PartToolCall:   "tool_call",
	PartToolResult: "tool_result",
}

// PartError says what is wrong with a part, and in which of its members
// ("type", "text", "file", "tool_call.name" …).
type PartError struct {
	Type   PartType
	Member string
	Reason string
}

// Error names the part's type, the member and the reason.
func (e *PartError) Error() string {
	if e.Member == "type" {
		return e.Reason
	}
	return fmt.Sprintf("%s part: %q %s", e.Type, e.Member, e.Reason)
}

// Clone returns a deep copy of p.
func (p Part) Clone() Part {
	out := p
	out.Data = slices.Clone(p.Data)
	if p.File != nil {
		f := *p.File
		f.Bytes = slices.Clone(f.Bytes)
		out.File = &f
	}
	if p.ToolCall != nil {
		c := *p.ToolCall
		c.Arguments = slices.Clone(c.Arguments)
		out.ToolCall = &c
	}
	if p.ToolResult != nil {
		r := *p.ToolResult
		out.ToolResult = &r
	}
	out.Metadata = cloneMap(p.Metadata)
	return out
}

// cloneMap deep-copies JSON-shaped metadata (maps, slices, scalars).
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return cloneMap(t)
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = cloneValue(e)
		}
		return s
	case json.RawMessage:
		return slices.Clone(t)
	default:
		return v
	}
}
