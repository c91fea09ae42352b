package mcpserver_test

import (
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// TestInteropJS runs the official @modelcontextprotocol/sdk client
// (interop/js/mcp.mjs, a 2025-11-25 legacy session) against a real server:
// tools, calls, progress, a tool call inside, elicitation, cancel, a wrong
// argument. It skips only when node or the installed packages are missing
// and REQUIRE_INTEROP is unset (CI sets it).
func TestInteropJS(t *testing.T) {
	node, dir := nodetest.Find(t, "@modelcontextprotocol/sdk")
	e := newEnv(t)
	nodetest.Run(t, node, dir, e.base, "mcp.mjs", 60*time.Second, nil)
}
