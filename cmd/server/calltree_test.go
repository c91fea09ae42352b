package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// The 802-run report, refused before it runs: two workflows that run each
// other fail `agentd validate`, the cycle named.
func TestValidateRefusesWorkflowCycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	yaml := `
providers:
  s: {type: scripted, rules: [{match: ".*", reply: "ok"}]}
agents:
  - id: ping
    engine: graph
    provider: s
    workflow: {name: ping, steps: [{id: call, model: "agent:pong", instructions: "go"}]}
  - id: pong
    engine: graph
    provider: s
    workflow: {name: pong, steps: [{id: call, model: "agent:ping", instructions: "go"}]}
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := validateCommand([]string{path}, &out); err == nil || !strings.Contains(out.String(), "call cycle ping → pong (workflow step agent:pong) → ping (workflow step agent:ping)") {
		t.Fatalf("validate: %v\n%s", err, &out)
	}
}

// relayConfig is a server whose agent relay forwards every message to the
// relay agent at peer (a remote agent).
func relayConfig(t *testing.T, peer string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	yaml := "federation: {allow_private: true}\nagents:\n  - {id: relay, engine: remote, peer: '" +
		peer + "/agents/relay/.well-known/agent-card.json'}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two agentd servers whose relays forward to each other: the call chain
// travels in the A2A call-tree extension, and the second hop back to the
// first server's relay is refused with the cycle named; each server ran
// a bounded number of tasks.
func TestFederationCycleStops(t *testing.T) {
	var target atomic.Pointer[url.URL]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := target.Load()
		if u == nil {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	b := start(t, "--config", relayConfig(t, front.URL))
	a := start(t, "--config", relayConfig(t, b.base))
	u, _ := url.Parse(a.base)
	target.Store(u)

	v := readJSON[runJSON](t, a.post(t, "/v1/agents/relay/messages", `{"text": "round and round"}`), http.StatusOK)
	if v.Status != "failed" {
		t.Fatalf("run %+v, want failed", v)
	}
	t.Logf("error: %s", v.Error)
	if !strings.Contains(string(v.Error), "call cycle relay → relay → relay") {
		t.Fatalf("error %s does not name the cycle", v.Error)
	}
	for _, s := range []*server{a, b} {
		var page struct {
			Runs []runJSON `json:"runs"`
		}
		page = readJSON[struct {
			Runs []runJSON `json:"runs"`
		}](t, s.get(t, "/v1/runs?agent_id=relay"), http.StatusOK)
		if n := len(page.Runs); n == 0 || n > 2 {
			t.Errorf("server %s ran %d relay runs, want 1 or 2", s.base, n)
		}
	}
}
