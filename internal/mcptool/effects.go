package mcptool

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/errdefs"
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

var _ tool.Reconciler = (*mcpTool)(nil)

// SetStatusTool makes the server's tool status (its agentd name,
// "<server>__<tool>") the reconcile call of tool name: called with
// {"idempotency_key": key} (and the key in _meta), a result says the
// effect happened (its content is the call's result), an error result that
// it did not. Errors name the tool that is not the server's.
func (c *Conn) SetStatusTool(name, status string) error {
	var t, st *mcpTool
	for _, x := range c.tools {
		m := x.(*mcpTool)
		switch m.name {
		case name:
			t = m
		case status:
			st = m
		}
	}
	switch {
	case t == nil:
		return errdefs.Validationf("mcp server %q has no tool %q", c.name, name)
	case st == nil:
		return errdefs.Validationf("mcp server %q has no tool %q (status_tool of %s)", c.name, status, name)
	}
	t.status = st
	return nil
}

// Reconciles reports whether a status tool is set.
func (t *mcpTool) Reconciles() bool { return t.status != nil }

// Reconcile asks the status tool whether call's effect happened.
func (t *mcpTool) Reconcile(ctx context.Context, call tool.Call) (tool.Result, bool, error) {
	if t.status == nil {
		return tool.Result{}, false, errdefs.Validationf("tool %q has no status_tool to reconcile with", t.name)
	}
	args, _ := json.Marshal(map[string]string{keyArguments[0]: call.IdempotencyKey})
	params := &mcp.CallToolParams{Name: t.status.remote, Arguments: json.RawMessage(args), Meta: mcp.Meta{EffectKeyMeta: call.IdempotencyKey}}
	res, err := t.conn.call(ctx, params)
	if err != nil {
		return tool.Result{}, false, errdefs.NotAvailablef("mcp server %q: status of %s: %v", t.conn.name, t.name, err)
	}
	if res.IsError {
		return tool.Result{}, false, nil
	}
	return tool.Text(contentText(res.Content)), true, nil
}
