package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestInteropJS runs the official @modelcontextprotocol/sdk client
// (interop/js/mcp.mjs, a 2025-11-25 legacy session) against a real server:
// tools, calls, progress, a tool call inside, elicitation, cancel, a wrong
// argument. It skips only when node or the installed packages are missing
// and REQUIRE_INTEROP is unset (CI sets it).
func TestInteropJS(t *testing.T) {
	required := os.Getenv("REQUIRE_INTEROP") != ""
	node, err := exec.LookPath("node")
	if err != nil {
		if required {
			t.Fatal("REQUIRE_INTEROP is set but node is not installed")
		}
		t.Skip("node is not installed; the @modelcontextprotocol/sdk interop test needs it (set REQUIRE_INTEROP=1 to make this a failure)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "interop", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if required {
			t.Fatalf("REQUIRE_INTEROP is set but %s/node_modules is missing: run `npm ci` there", dir)
		}
		t.Skipf("%s/node_modules is missing: run `npm ci` there to enable the @modelcontextprotocol/sdk interop test", dir)
	}
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "mcp.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTD_URL="+e.base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node mcp.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
