package storetest

import (
	"testing"

	"agentd/internal/store"
)

// Factory returns a fresh, empty store for one subtest. It registers its own
// cleanup (t.Cleanup) and may close the store there even if the suite
// closed it already.
type Factory func(t *testing.T) store.Store

// RunSuite runs the store contract against the stores newStore returns.
// Each subtest asks the factory for a fresh store.
func RunSuite(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	groups := []struct {
		name string
		run  func(t *testing.T, f Factory)
	}{
		{"Lifecycle", testLifecycle},
		{"Tasks", testTasks},
		{"ListTasks", testListTasks},
		{"Apply", testApplyAtomicity},
		{"Idempotency", testIdempotency},
		{"Transcripts", testTranscripts},
		{"Events", testEvents},
		{"Checkpoints", testCheckpoints},
		{"PushConfigs", testPushConfigs},
		{"Leases", testLeases},
		{"UsageCounters", testUsageCounters},
		{"NULCharacters", testNUL},
		{"Tenancy", testTenancy},
		{"Concurrency", testConcurrency},
		{"Replicas", testReplicas},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, newStore) })
	}
}

// subtests runs each named case against a fresh store from f.
func subtests(t *testing.T, f Factory, cases map[string]func(t *testing.T, s store.Store)) {
	t.Helper()
	for _, name := range sortedKeys(cases) {
		t.Run(name, func(t *testing.T) { cases[name](t, f(t)) })
	}
}

func testLifecycle(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"PingThenClose": func(t *testing.T, s store.Store) {
			if err := s.Ping(t.Context()); err != nil {
				t.Fatalf("Ping on a fresh store: got %v, want nil", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close: got %v, want nil", err)
			}
		},
	})
}
