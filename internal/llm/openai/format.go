package openai

import (
	"regexp"

	"agentd/internal/llm"
)

// The response_format member of a request: a JSON Schema the answer must
// match.
type wireResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *wireJSONSchema `json:"json_schema,omitempty"`
}

type wireJSONSchema struct {
	Name   string `json:"name"`
	Schema any    `json:"schema"`
	Strict bool   `json:"strict,omitempty"`
}

// schemaName is what OpenAI accepts as a schema's name.
var schemaName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// responseFormat is the wire form of f (nil for none). A name the API
// would refuse becomes "response".
func responseFormat(f *llm.ResponseFormat) *wireResponseFormat {
	if f == nil || len(f.Schema) == 0 {
		return nil
	}
	name := f.Name
	if !schemaName.MatchString(name) {
		name = "response"
	}
	return &wireResponseFormat{Type: "json_schema", JSONSchema: &wireJSONSchema{
		Name: name, Schema: rawJSON(f.Schema), Strict: f.Strict,
	}}
}

// rawJSON keeps a schema's bytes as they are in the encoded request.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

type wireNamedTool struct {
	Type     string           `json:"type"`
	Function wireToolFunction `json:"function"`
}

type wireToolFunction struct {
	Name string `json:"name"`
}

// toolChoice is the wire form of c: a mode string, an object naming a
// function, or nil for the server's default. A request without tools
// sends none, which servers would refuse.
func toolChoice(c llm.ToolChoice, tools int) any {
	switch {
	case c.IsZero() || tools == 0:
		return nil
	case c.Mode == llm.ToolChoiceTool:
		return wireNamedTool{Type: "function", Function: wireToolFunction{Name: c.Name}}
	}
	return c.Mode
}
