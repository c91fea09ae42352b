package main

// Bad command lines and configurations fail before serving, with clear
// messages; a configuration file replaces the demo.

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandLineErrors checks that bad invocations fail before serving,
// with messages that name the culprit and the usage exit status where the
// command line is at fault.
func TestCommandLineErrors(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte(strings.Replace(minimalConfig, "[clock]", "[clok]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "missing.yaml")
	for _, c := range []struct {
		name     string
		args     []string
		exit     int
		mentions []string
	}{
		{"unknown flag", []string{"--bogus"}, 2, []string{"bogus"}},
		{"stray argument", []string{"serve"}, 2, []string{"serve"}},
		{"bad log level", []string{"--log-level", "loud"}, 2, []string{"--log-level", "loud"}},
		{"bad log format", []string{"--log-format", "xml"}, 2, []string{"--log-format", "xml"}},
		{"bad duration", []string{"--shutdown-timeout", "soon"}, 2, []string{"shutdown-timeout"}},
		{"bad addr", []string{"--addr", "nowhere"}, 2, []string{"--addr", "nowhere"}},
		{"unreadable config", []string{"--config", unreadable, "--addr", "127.0.0.1:0"}, 1, []string{unreadable}},
		{"config typo", []string{"--config", typo, "--addr", "127.0.0.1:0"}, 1, []string{"agents[0].tools[0]", `"clok"`}},
		{"beyond loopback", []string{"--addr", "0.0.0.0:0"}, 2, []string{"0.0.0.0", "--allow-unauthenticated"}},
		{"beyond loopback, IPv6", []string{"--addr", "[::]:0"}, 2, []string{"--allow-unauthenticated"}},
		{"beyond loopback, any host", []string{"--addr", ":0"}, 2, []string{"--allow-unauthenticated"}},
		{"profiles beyond loopback", []string{"--addr", "127.0.0.1:0", "--debug-addr", "0.0.0.0:0"}, 2, []string{"--debug-addr", "0.0.0.0:0", "loopback"}},
		{"profiles on a bad address", []string{"--addr", "127.0.0.1:0", "--debug-addr", "6060"}, 2, []string{"--debug-addr", "6060"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			var stderr syncBuffer
			ready := make(chan string, 1)
			err := run(ctx, c.args, noEnv, &stderr, ready)
			if err == nil {
				t.Fatalf("run %v succeeded", c.args)
			}
			select {
			case addr := <-ready:
				t.Errorf("run %v listened on %s before failing", c.args, addr)
			default:
			}
			if got := exitCode(err); got != c.exit {
				t.Errorf("exit status %d, want %d (%v)", got, c.exit, err)
			}
			for _, m := range c.mentions {
				if !strings.Contains(err.Error(), m) && !strings.Contains(stderr.String(), m) {
					t.Errorf("error %q (stderr %q) does not mention %q", err, stderr.String(), m)
				}
			}
		})
	}
}

// minimalConfig is a small valid configuration: one scripted agent with
// the clock tool.
const minimalConfig = `
providers:
  script:
    type: scripted
    rules:
      - name: always
        match: '(?s).*'
        reply: 'fine'
agents:
  - id: solo
    engine: loop
    provider: script
    tools: [clock]
`

// TestServesAConfigFile starts the command on a configuration file.
func TestServesAConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, []byte(minimalConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, "--config", path)
	v := readJSON[runJSON](t, s.post(t, "/v1/agents/solo/messages", `{"text":"how are you?"}`), http.StatusOK)
	if v.Status != "completed" || v.Messages[len(v.Messages)-1].Parts[0].Text != "fine" {
		t.Errorf("run %+v", v)
	}
	res := s.post(t, "/v1/agents/echo/messages", `{"text":"hello"}`)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the demo's echo agent answers %d with a config file that lacks it", res.StatusCode)
	}
}
