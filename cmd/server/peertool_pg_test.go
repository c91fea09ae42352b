package main

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPeerToolSurvivesKilledReplica: replicas A and B (PostgreSQL) serve
// the demo's scout, whose peer tool ask_echo reaches a third agentd
// process P (memstore). A is SIGKILLed while the peer's answer streams
// into the tool call as progress; B resumes the scout's run, the loop runs
// the pending call again under the same idempotency key, the call's child
// run re-attaches to the same peer task — P ran exactly one echo task —
// and the scout answers with the peer's whole answer. The progress events
// are the caller's copy of the child's log (whose checkpoint rides with
// its events), written by the caller's log on its own: the one update of
// a write the kill split may repeat (docs/federation.md).
func TestPeerToolSurvivesKilledReplica(t *testing.T) {
	skipShort(t)
	p := startReplica(t, "P", "", writeConfig(t, nil))
	dsn := sharedDSN(t)
	cfg := withScoutPeer(t, writeConfig(t, map[string]any{"lease_ttl": "2s"}), p.base+"/agents/echo/.well-known/agent-card.json")
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := a.submitTo(t, c, "scout", "ask the peer "+streamRun)
	f := &follower{c: c, runID: id}
	strike, _ := f.failOver(ctx, t, a, b, "progress events", func(ev event) bool { return ev.typ == "progress" && ev.data["text"] != nil })
	want := strings.Join(toks(200), " ")
	if got := strings.Join(deltas(f.evs), " "); got != "The peer agent answered: "+want {
		t.Errorf("the scout's answer %q, want the peer's whole answer", got)
	}
	progress := strings.Fields(progressText(f.evs))
	once := slices.Compact(slices.Clone(progress))
	if !slices.Equal(once, toks(200)) || len(progress)-len(once) > 1 {
		t.Errorf("progress after a kill at %d: %d tokens (%d doubled), want tok1 … tok200, at most one doubled", strike, len(progress), len(progress)-len(once))
	}
	res, err := c.Get(p.base + "/v1/runs?agent=echo")
	if err != nil {
		t.Fatal(err)
	}
	runs := readJSON[struct {
		Runs []runState `json:"runs"`
	}](t, res, http.StatusOK)
	if len(runs.Runs) != 1 || runs.Runs[0].Status != "completed" {
		t.Errorf("the peer's echo runs %+v, want one, completed: the resumed call must re-attach, not ask again", runs.Runs)
	}
	t.Logf("kill at progress %d: %d progress tokens, %d doubled", strike, len(progress), len(progress)-len(once))
}

// withScoutPeer points the demo scout's peer tool at card and returns the
// configuration's path.
func withScoutPeer(t *testing.T, path, card string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	agents, _ := cfg["agents"].([]any)
	for _, a := range agents {
		if m, _ := a.(map[string]any); m["id"] == "scout" {
			tools, _ := m["peer_tools"].([]any)
			tools[0].(map[string]any)["card"] = card
		}
	}
	if b, err = yaml.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
