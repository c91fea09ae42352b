package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestConsoleInBrowser drives the web console in a real headless Chromium
// (Debian's chromium, through playwright-core from interop/js) against
// two real servers on loopback: the demo, and the demo with two tenants'
// API keys. The script (interop/js/console) fails on any page or console
// error. Unless REQUIRE_BROWSER is set, it skips under -short and when
// node, chromium or the npm packages are missing. CONSOLE_SCREENSHOTS keeps the
// screenshots in that directory (else a temporary one).
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() && os.Getenv("REQUIRE_BROWSER") == "" {
		t.Skip("the console's browser test takes about a minute; it runs without -short")
	}
	node, chromium, dir := browserTools(t)
	demo := startEnv(t, func(string) string { return "" })
	authed := startWithAuth(t, "", authYAML)
	shots := os.Getenv("CONSOLE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("console", "console.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"AGENTD_URL="+demo.base, "AGENTD_AUTH_URL="+authed.base,
		"KEY_A="+acmeKey, "KEY_B="+globexKey,
		"CHROMIUM="+chromium, "SCREENSHOT_DIR="+shots)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node console/console.mjs: %v", err)
	}
}

// browserTools finds node, chromium and interop/js with playwright-core,
// or skips (fails under REQUIRE_BROWSER).
func browserTools(t *testing.T) (node, chromium, dir string) {
	t.Helper()
	required := os.Getenv("REQUIRE_BROWSER") != ""
	missing := func(what string) {
		if required {
			t.Fatalf("REQUIRE_BROWSER is set but %s", what)
		}
		t.Skipf("%s; the console's browser test needs it (set REQUIRE_BROWSER=1 to make this a failure)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	chromium = os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing(chromium + " is not installed")
	}
	dir, err = filepath.Abs(filepath.Join("..", "..", "interop", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		missing(dir + "/node_modules/playwright-core is missing (run `npm ci` there)")
	}
	return node, chromium, dir
}
