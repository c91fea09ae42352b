package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ResponseFormat asks the model for an answer in a given shape: a JSON
// document that Schema accepts. Providers that can enforce it (OpenAI's
// response_format json_schema) send it; the caller puts the schema in the
// prompt for those configured without it.
type ResponseFormat struct {
	// Name names the schema to the provider (letters, digits, _ and -).
	Name string
	// Schema is the JSON Schema of the answer.
	Schema json.RawMessage
	// Strict asks the provider to enforce the schema exactly.
	Strict bool
}

// Tool choice modes, as OpenAI names them. A named tool is ToolChoice{Mode:
// ToolChoiceTool, Name: …}.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	ToolChoiceTool     = "tool"
)

// ToolChoice says whether the model may, must or must not call a tool in
// a turn, or which one it must call. The zero value leaves it to the
// provider's default (auto).
type ToolChoice struct {
	Mode string
	// Name is the tool a ToolChoiceTool turn must call.
	Name string
}

// IsZero reports whether c leaves the choice to the provider.
func (c ToolChoice) IsZero() bool { return c.Mode == "" }

// Forces reports whether c makes the model call a tool.
func (c ToolChoice) Forces() bool { return c.Mode == ToolChoiceRequired || c.Mode == ToolChoiceTool }

// String is the configuration spelling of c: "auto", "none", "required",
// or the tool's name.
func (c ToolChoice) String() string {
	if c.Mode == ToolChoiceTool {
		return c.Name
	}
	return c.Mode
}

// ParseToolChoice reads the configuration spelling of a tool choice:
// "auto", "none", "required", or the name of one of tools (a tool named
// like a mode is named "tool:<name>"). Empty is the zero ToolChoice.
func ParseToolChoice(s string, tools []string) (ToolChoice, error) {
	switch s {
	case "":
		return ToolChoice{}, nil
	case ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
		return ToolChoice{Mode: s}, nil
	}
	name := strings.TrimPrefix(s, "tool:")
	for _, t := range tools {
		if t == name {
			return ToolChoice{Mode: ToolChoiceTool, Name: name}, nil
		}
	}
	return ToolChoice{}, fmt.Errorf("tool_choice %q: want auto, none, required or one of the agent's tools %q", s, tools)
}
