package mcptool

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/tool"
)

// EffectKeyMeta is the _meta member that carries a call's effect key to
// the server (docs/reliability.md): the same on every attempt of the call.
const EffectKeyMeta = "agentd.dev/effect-key"

// keyArguments are the argument names a tool may declare to take the
// effect key itself.
var keyArguments = []string{"idempotency_key", "idempotencyKey"}

// effectsOf is the effect kind a tool's annotations declare: read-only
// tools have none; a tool that takes the effect key as an argument
// (keyed) is keyed; idempotent ones are idempotent; and the rest — with
// no annotations, too, as the MCP specification's defaults say (not
// read-only, destructive, not idempotent) — are unsafe.
func effectsOf(a *mcp.ToolAnnotations, keyed bool) tool.Effects {
	switch {
	case a != nil && a.ReadOnlyHint:
		return tool.EffectsNone
	case keyed:
		return tool.EffectsKeyed
	case a == nil:
		return tool.EffectsUnsafe
	case a.IdempotentHint:
		return tool.EffectsIdempotent
	}
	return tool.EffectsUnsafe
}

// keyArgument is the property of schema that takes the effect key, if any.
func keyArgument(schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	for _, name := range keyArguments {
		if _, ok := s.Properties[name]; ok {
			return name
		}
	}
	return ""
}

// withKeyArgument is args with key under name (unless name is empty):
// the effect key wins over a value the model made up, which would not be
// the same on every attempt.
func withKeyArgument(args json.RawMessage, name, key string) any {
	if name == "" {
		if len(args) == 0 {
			return nil
		}
		return args
	}
	obj := map[string]json.RawMessage{}
	if len(args) > 0 && json.Unmarshal(args, &obj) != nil {
		return args
	}
	obj[name], _ = json.Marshal(key)
	return obj
}
