package main

import (
	"context"
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestFederatedRunSurvivesKilledReplica: replicas A and B (PostgreSQL)
// serve a relay agent whose peer is a third agentd process P (memstore).
// A is SIGKILLed while the relay streams P's answer; B resumes the relay's
// run, re-attaches to the same peer task after the last forwarded seq
// (never a second task), and the relay's log holds every token of P's
// answer exactly once, in order: each forwarded update's checkpoint is
// written in the same transaction as its event.
func TestFederatedRunSurvivesKilledReplica(t *testing.T) {
	skipShort(t)
	p := startReplica(t, "P", "", writeConfig(t, nil))
	dsn := sharedDSN(t)
	cfg := withPeer(t, writeConfig(t, map[string]any{"lease_ttl": "2s"}), p.base+"/agents/echo/.well-known/agent-card.json")
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := a.submitTo(t, c, "relay", streamRun)
	f := &follower{c: c, runID: id}
	strike, _ := f.failOver(ctx, t, a, b, "deltas", func(ev event) bool { return ev.typ == "delta" })
	// The kill lands right after a delta became visible: its event is
	// durable, and so is the checkpoint that covers it (same write).
	if got := deltas(f.evs); !slices.Equal(got, toks(200)) {
		t.Errorf("the relay's tokens after a kill at delta %d: %d tokens, want tok1 … tok200 in order, each once: %v", strike, len(got), got)
	}
	if st := b.run(t, c, id); st.Status != "completed" || st.Attempt != 2 {
		t.Errorf("run %+v, want completed in attempt 2", st)
	}
}

// withPeer points the configuration's relay agent at peer and returns the
// path.
func withPeer(t *testing.T, path, peer string) string {
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
		if m, _ := a.(map[string]any); m["id"] == "relay" {
			m["peer"] = peer
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
