package main

import (
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// nodeScript returns node and the interop/js directory, or skips (fails
// under REQUIRE_INTEROP) when node or the package pkg is missing.
func nodeScript(t *testing.T, pkg string) (node, dir string) { return nodetest.Find(t, pkg) }

// runNode runs script in dir against base and fails the test with its
// output if it fails.
func runNode(t *testing.T, node, dir, base, script string, args ...string) {
	t.Helper()
	nodetest.Run(t, node, dir, base, script, 90*time.Second, nil, args...)
}

// withConfirmTool adds to the assistant's script a call to the frontend
// tool "confirm" (which no agent has: the client offers it) and the
// answer to its result.
func withConfirmTool(cfg map[string]any) {
	p := cfg["providers"].(map[string]any)["assistant-script"].(map[string]any)
	rules := []any{
		map[string]any{"name": "report the confirmation", "after_tool": "confirm", "reply": "The person answered: {{.ToolResult}}"},
		map[string]any{"name": "ask the person", "match": "(?i)^please confirm (.+)$",
			"tool_calls": []any{map[string]any{"name": "confirm", "arguments": `{"question": {{index .Groups 1 | json}}}`}}},
	}
	p["rules"] = append(rules, p["rules"].([]any)...)
}

// TestAGUIInteropJS runs @ag-ui/client's HttpAgent against the AG-UI face
// (interop/js/agui.mjs): the echo agent, the assistant with a tool call,
// the guarded agent through an interrupt and a resume, the research
// workflow's state, a cancel and a frontend tool round trip. The client's
// own event verification checks every stream.
func TestAGUIInteropJS(t *testing.T) {
	node, dir := nodeScript(t, "@ag-ui/client")
	s := start(t, "--config", demoConfigWith(t, withConfirmTool))
	runNode(t, node, dir, s.base, "agui.mjs")
}

// TestAISDKInteropJS runs the ai package's chat transport and
// readUIMessageStream against the AI SDK face (interop/js/aisdk.mjs):
// echo, a tool call, and a resume after a cut.
func TestAISDKInteropJS(t *testing.T) {
	node, dir := nodeScript(t, "ai")
	s := start(t)
	runNode(t, node, dir, s.base, "aisdk.mjs")
}
