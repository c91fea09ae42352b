package mcpserver

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/engine"
	"agentd/internal/runtime"
)

// tool is one agent as an MCP tool.
type tool struct {
	agentID string
	def     *mcp.Tool
	// structured: the agent answers with JSON its response schema
	// accepts, which the result carries as structuredContent.
	structured bool
}

// inputSchema is every agent tool's arguments: the message, optional data,
// the conversation to continue, or the run waiting for this answer.
var inputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "message": {"type": "string", "description": "The message to the agent."},
    "data": {"type": "object", "description": "Structured input, sent beside the message as a data part."},
    "context_id": {"type": "string", "description": "Continue this conversation (a context_id from an earlier result's _meta)."},
    "run_id": {"type": "string", "description": "Answer this run, which waits for input (a run_id from a result's _meta)."}
  },
  "required": ["message"],
  "additionalProperties": false
}`)

func newTool(a *runtime.Agent) tool {
	t := tool{agentID: a.ID, def: &mcp.Tool{
		Name:        ToolName(a.ID),
		Title:       a.Card.Name,
		Description: description(a),
		InputSchema: inputSchema,
		Annotations: &mcp.ToolAnnotations{Title: a.Card.Name, OpenWorldHint: ptr(true)},
	}}
	if schema := engine.ResponseSchemaOf(a.Engine); len(schema) > 0 {
		t.def.OutputSchema = schema
		t.structured = true
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// ToolName is the MCP tool name of agent id: MCP allows 1-128 characters
// of A-Z, a-z, 0-9, '_', '-' and '.'; agentd's ids already keep to them
// (lowercase letters, digits, '-' and '_'), and any other character
// becomes '_'.
func ToolName(id string) string {
	b := []byte(id)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

// description is the agent's card description followed by its skills,
// one line each with its examples, so that a model choosing tools reads
// what the agent is for.
func description(a *runtime.Agent) string {
	var sb strings.Builder
	sb.WriteString(strings.TrimSpace(a.Card.Description))
	if sb.Len() == 0 {
		sb.WriteString("The agentd agent " + a.ID + ".")
	}
	for i, sk := range a.Card.Skills {
		if i == 0 {
			sb.WriteString("\n\nSkills:")
		}
		sb.WriteString("\n- " + sk.Name)
		if sk.Description != "" {
			sb.WriteString(": " + sk.Description)
		}
		if len(sk.Examples) > 0 {
			sb.WriteString(" (e.g. " + quoteAll(sk.Examples) + ")")
		}
	}
	return sb.String()
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		b, _ := json.Marshal(s)
		q[i] = string(b)
	}
	return strings.Join(q, ", ")
}
