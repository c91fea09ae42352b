package mcptool

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/tool"
)

// A tool's kind follows its annotations (the MCP defaults when it has
// none), and a tool that takes idempotency_key is keyed and gets the key.
func TestEffectsFromAnnotations(t *testing.T) {
	f := false
	cases := []struct {
		a     *mcp.ToolAnnotations
		keyed bool
		want  tool.Effects
	}{
		{nil, false, tool.EffectsUnsafe},
		{&mcp.ToolAnnotations{ReadOnlyHint: true}, true, tool.EffectsNone},
		{&mcp.ToolAnnotations{IdempotentHint: true}, false, tool.EffectsIdempotent},
		{&mcp.ToolAnnotations{DestructiveHint: &f}, false, tool.EffectsUnsafe},
		{nil, true, tool.EffectsKeyed},
	}
	for i, c := range cases {
		if got := effectsOf(c.a, c.keyed); got != c.want {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
	schema := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"},"idempotency_key":{"type":"string"}}}`)
	name := keyArgument(schema)
	if name != "idempotency_key" || keyArgument(json.RawMessage(`{"type":"object"}`)) != "" {
		t.Fatalf("key argument %q", name)
	}
	got, _ := json.Marshal(withKeyArgument(json.RawMessage(`{"amount":3}`), name, "fx-1"))
	if string(got) != `{"amount":3,"idempotency_key":"fx-1"}` {
		t.Fatalf("arguments %s", got)
	}
	kept, _ := json.Marshal(withKeyArgument(json.RawMessage(`{"idempotency_key":"mine"}`), name, "fx-1"))
	if string(kept) != `{"idempotency_key":"fx-1"}` {
		t.Fatalf("the model's own key was kept: %s", kept)
	}
}
