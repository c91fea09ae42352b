package engine

import "encoding/json"

// ResponseSchemer is the optional interface through which an engine
// declares the JSON Schema its final answers match (structured output):
// faces that describe an agent's output (an MCP tool's outputSchema) read
// it. An engine without one declares nothing.
type ResponseSchemer interface {
	// ResponseSchema returns the schema, or nil when answers are free text.
	ResponseSchema() json.RawMessage
}

// ResponseSchemaOf returns the response schema eng (or an engine it wraps)
// declares, or nil.
func ResponseSchemaOf(eng Engine) json.RawMessage {
	if s, ok := eng.(ResponseSchemer); ok {
		return s.ResponseSchema()
	}
	return nil
}
