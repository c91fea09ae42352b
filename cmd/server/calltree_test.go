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
	path := filepath.Join("..", "..", "internal", "config", "testdata", "pingpong.yaml")
	var out bytes.Buffer
	if err := validateCommand([]string{path}, &out); err == nil || !strings.Contains(out.String(), "call cycle ping → pong (workflow step agent:pong) → ping (workflow step agent:ping)") {
		t.Fatalf("validate: %v\n%s", err, &out)
	}
}

// relayConfig is a server whose agent relay forwards every message to the
// relay agent at peer (a remote agent); server holds extra server keys.
func relayConfig(t *testing.T, peer string, server ...string) string {
	t.Helper()
	return configFile(t, "server: {"+strings.Join(server, ", ")+"}\nfederation: {allow_private: true}\nagents:\n"+
		"  - {id: relay, engine: remote, peer: '"+peer+"/agents/relay/.well-known/agent-card.json'}\n")
}

// Two agentd servers whose relays forward to each other: the call chain
// travels in the A2A call-tree extension, and the second hop back to the
// first server's relay is refused with the cycle named; with the first
// server's max_call_depth of 2, carried to the second, the same hop stops
// at the depth limit. The caller's run fails with the class the peer gave
// (call-tree extension, Task metadata #errorClass). Each server ran a
// bounded number of tasks.
func TestFederationCycleStops(t *testing.T) {
	for _, c := range []struct {
		name, server, want, class string
	}{
		{"cycle", "", "call cycle relay → relay → relay", `"class":"conflict"`},
		{"depth", "max_call_depth: 2", "over its limit max_call_depth of 2", `"class":"budget_exceeded"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := relayPair(t, c.server)
			v := readJSON[runJSON](t, a.post(t, "/v1/agents/relay/messages", `{"text": "round and round"}`), http.StatusOK)
			e := string(v.Error)
			if v.Status != "failed" || !strings.Contains(e, c.want) || !strings.Contains(e, c.class) || strings.Contains(e, "127.0.0.1") {
				t.Fatalf("run %s, error %s: want failed naming %q, with %s (the peer's class), and no peer's address", v.Status, e, c.want, c.class)
			}
			for _, s := range []*server{a, b} {
				page := readJSON[struct {
					Runs []runJSON `json:"runs"`
				}](t, s.get(t, "/v1/runs?agent_id=relay"), http.StatusOK)
				if n := len(page.Runs); n == 0 || n > 2 {
					t.Errorf("server %s ran %d relay runs, want 1 or 2", s.base, n)
				}
			}
		})
	}
}

// relayPair starts two servers whose relays forward to each other; a's
// configuration gets the server keys server. b reaches a through a proxy
// started first, since a's address is known only once it listens.
func relayPair(t *testing.T, server string) (a, b *server) {
	t.Helper()
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
	b = start(t, "--config", relayConfig(t, front.URL))
	a = start(t, "--config", relayConfig(t, b.base, server))
	u, _ := url.Parse(a.base)
	target.Store(u)
	return a, b
}

// A peer's tokens count in the caller's run: the relay's run on one
// server reports the usage of the worker's run on the other.
func TestPeerUsageRollsUp(t *testing.T) {
	peerCfg := configFile(t, `
providers:
  s: {type: scripted, rules: [{match: '.*', reply: 'the worker answered with quite a few words'}]}
agents:
  - {id: relay, engine: loop, provider: s}
`)
	b := start(t, "--config", peerCfg)
	a := start(t, "--config", relayConfig(t, b.base))
	v := readJSON[usageRun](t, a.post(t, "/v1/agents/relay/messages", `{"text": "work"}`), http.StatusOK)
	if v.Status != "completed" {
		t.Fatalf("relay run %+v", v)
	}
	page := readJSON[struct {
		Runs []usageRun `json:"runs"`
	}](t, b.get(t, "/v1/runs?agent_id=relay"), http.StatusOK)
	if len(page.Runs) != 1 || page.Runs[0].Usage.TotalTokens == 0 {
		t.Fatalf("peer runs %+v, want one that used tokens", page.Runs)
	}
	if got, want := v.Usage.TotalTokens, page.Runs[0].Usage.TotalTokens; got != want {
		t.Fatalf("the caller's run used %d tokens, the peer's %d: the peer's usage must roll up", got, want)
	}
}

// A request bounds its own call tree with the call-tree extension in its
// message's metadata (here over REST): a token budget stops the run that
// passes it, a deadline already past refuses the run.
func TestRequestBoundsItsTree(t *testing.T) {
	s := start(t)
	ext := func(v string) string {
		return `{"message": {"role": "user", "parts": [{"type": "text", "text": "what is 6*7?"}], "metadata": {"https://agentd.dev/a2a/ext/call-tree/v1": ` + v + `}}}`
	}
	v := readJSON[usageRun](t, s.post(t, "/v1/agents/assistant/messages", ext(`{"chain": [], "budgetTokens": 5}`)), http.StatusOK)
	if v.Status != "failed" || v.Error == nil || v.Error.Class != "budget_exceeded" || !strings.Contains(v.Error.Message, "budget of 5") {
		t.Fatalf("a 5-token budget: %+v", v)
	}
	v = readJSON[usageRun](t, s.post(t, "/v1/agents/assistant/messages", ext(`{"chain": [], "deadline": "2020-01-01T00:00:00Z"}`)), http.StatusOK)
	if v.Status != "failed" || v.Error == nil || v.Error.Class != "timeout" {
		t.Fatalf("a deadline in the past: %+v", v)
	}
	v = readJSON[usageRun](t, s.post(t, "/v1/agents/assistant/messages", ext(`{"chain": [], "budgetTokens": 100000}`)), http.StatusOK)
	if v.Status != "completed" {
		t.Fatalf("a budget large enough: %+v", v)
	}
}

// configFile writes yaml as agentd.yaml in a directory of its own and
// returns its path.
func configFile(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
