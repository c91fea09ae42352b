// Package nodetest runs the ecosystem's own JavaScript clients (the pinned
// packages of interop/js: @a2a-js/sdk, @ag-ui/client, ai,
// @langchain/langgraph-sdk, @modelcontextprotocol/sdk, playwright-core)
// from Go tests against a real server. A test that needs one asks Find for
// node and the package; without them it skips, unless REQUIRE_INTEROP is
// set (CI sets it, and .ci/run installs the packages with npm ci), when it
// fails.
//
// Imports: none.
package nodetest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Find returns node and the interop/js directory, in which pkg (a path
// under node_modules, "@ag-ui/client") must be installed; it skips the
// test (fails it under REQUIRE_INTEROP) when either is missing.
func Find(t testing.TB, pkg string) (node, dir string) {
	t.Helper()
	required := os.Getenv("REQUIRE_INTEROP") != ""
	node, err := exec.LookPath("node")
	if err != nil {
		if required {
			t.Fatal("REQUIRE_INTEROP is set but node is not installed")
		}
		t.Skip("node is not installed (set REQUIRE_INTEROP=1 to make this a failure)")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "interop", "js")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))); err != nil {
		if required {
			t.Fatalf("REQUIRE_INTEROP is set but %s is not installed in %s: run `npm ci` there", pkg, dir)
		}
		t.Skipf("%s is not installed in %s: run `npm ci` there", pkg, dir)
	}
	return node, dir
}

// Run runs node script (with args) in dir, the server at base as
// AGENTD_URL and env besides, for at most timeout, and fails the test with
// the script's output if it fails. It returns the output.
func Run(t testing.TB, node, dir, base, script string, timeout time.Duration, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "AGENTD_URL="+base, "SUPPRESS_TRANSFORMATION_WARNINGS=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
	return out
}

// moduleRoot is the directory of the go.mod above the working directory
// (a test runs in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("nodetest: no go.mod above the working directory")
		}
		dir = parent
	}
}
