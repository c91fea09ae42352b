package limits

import "strings"

// MCP (POST /mcp, /mcp/agents/{id}) is JSON-RPC too: a tools/call starts
// (or answers) a run and holds its answer open as an event stream while
// the run works, so it counts as both; tasks/update answers a run that
// waits (a run, as POST /v1/runs/{id}/input is); every other method is a
// plain answer.

// mcpPath reports whether p is an MCP endpoint.
func mcpPath(p string) bool { return p == "/mcp" || strings.HasPrefix(p, "/mcp/agents/") }

// classifyMCPMethod is the kind of an MCP JSON-RPC method.
func classifyMCPMethod(m string) kind {
	switch m {
	case "tools/call":
		return kind{run: true, stream: true}
	case "tasks/update":
		return kind{run: true}
	}
	return kind{}
}
