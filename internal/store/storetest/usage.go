package storetest

import (
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

func testUsageCounters(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"AddsUp":                   testUsageAddsUp,
		"KeyedByPeriodAgentTenant": testUsageKeys,
		"ConcurrentChargesAddUp":   testUsageConcurrent,
		"Validation":               testUsageInvalid,
	})
}

func testUsageAddsUp(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := store.PeriodOf("a", 24*time.Hour, base)
	got, err := s.Usage(ctx, k)
	wantNoError(t, err, "Usage of a counter never charged")
	if got != 0 {
		t.Fatalf("Usage of a counter never charged: got %d, want 0", got)
	}
	for i, want := range []int64{10, 10, 35} {
		got, err := s.AddUsage(ctx, k, []int64{10, 0, 25}[i])
		wantNoError(t, err, "AddUsage")
		if got != want {
			t.Fatalf("AddUsage #%d: got total %d, want %d", i+1, got, want)
		}
	}
	// The same period, from another instant in it (and another zone).
	later := store.PeriodOf("a", 24*time.Hour, k.Start.Add(23*time.Hour).In(time.FixedZone("x", 5*3600)))
	if got, err := s.Usage(ctx, later); err != nil || got != 35 {
		t.Fatalf("Usage later in the period: got %d, %v; want 35", got, err)
	}
}

func testUsageKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	day := store.PeriodOf("a", 24*time.Hour, base)
	if _, err := s.AddUsage(ctx, day, 100); err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]store.UsageKey{
		"next period":  store.PeriodOf("a", 24*time.Hour, day.End()),
		"other agent":  store.PeriodOf("b", 24*time.Hour, base),
		"other length": {AgentID: "a", Period: time.Hour, Start: day.Start},
	} {
		if got, err := s.Usage(ctx, k); err != nil || got != 0 {
			t.Errorf("Usage of the %s: got %d, %v; want 0", name, got, err)
		}
	}
	if got, err := s.Usage(tenantCtx(t, "other"), day); err != nil || got != 0 {
		t.Errorf("Usage in another tenant: got %d, %v; want 0", got, err)
	}
	if got, err := s.Usage(ctx, day); err != nil || got != 100 {
		t.Errorf("Usage: got %d, %v; want 100", got, err)
	}
}

func testUsageConcurrent(t *testing.T, s store.Store) {
	k := store.PeriodOf("a", time.Hour, base)
	var maxSeen atomic.Int64
	parallel(20, func(int) {
		got, err := s.AddUsage(t.Context(), k, 3)
		if err != nil {
			t.Errorf("AddUsage: %v", err)
		}
		for cur := maxSeen.Load(); got > cur && !maxSeen.CompareAndSwap(cur, got); cur = maxSeen.Load() {
		}
	})
	if got, err := s.Usage(t.Context(), k); err != nil || got != 60 || maxSeen.Load() != 60 {
		t.Fatalf("after 20 concurrent charges of 3: Usage %d (%v), highest total answered %d; want 60", got, err, maxSeen.Load())
	}
}

func testUsageInvalid(t *testing.T, s store.Store) {
	for name, c := range map[string]struct {
		k      store.UsageKey
		tokens int64
	}{
		"no agent":          {store.UsageKey{Period: time.Hour, Start: base}, 1},
		"no period":         {store.UsageKey{AgentID: "a", Start: base}, 1},
		"sub-second period": {store.UsageKey{AgentID: "a", Period: 1500 * time.Millisecond, Start: base}, 1},
		"negative charge":   {store.PeriodOf("a", time.Hour, base), -1},
	} {
		if _, err := s.AddUsage(t.Context(), c.k, c.tokens); !errdefs.IsValidation(err) {
			t.Errorf("AddUsage with %s: got %v, want a validation error", name, err)
		}
	}
}
