package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Lease TTLs: long enough never to lapse during a test, or short enough
// that waiting for expiry is quick.
const (
	longTTL  = time.Hour
	shortTTL = time.Millisecond
)

func testLeases(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"AcquireFree":              testLeaseAcquireFree,
		"AcquireHeldIsConflict":    testLeaseHeld,
		"AcquireOwnExtends":        testLeaseOwn,
		"AcquireExpiredTakesOver":  testLeaseTakeOver,
		"Renew":                    testLeaseRenew,
		"ReleaseThenAcquire":       testLeaseRelease,
		"ExpiredLeases":            testLeaseExpired,
		"ConcurrentAcquireOneWins": testLeaseConcurrent,
		"Validation":               testLeaseInvalid,
		"RecordsTenant":            testLeaseTenant,
		"ExtendKeepsTenant":        testLeaseExtendKeepsTenant,
		"ClaimedByChange":          testLeaseClaimedByChange,
		"RenewMany":                testRenewLeases,
		"Fences":                   testLeaseFences,
		"ReleasedByChange":         testLeaseReleasedByChange,
		"PendingSignals":           testPendingSignals,
	})
}

// A lease records the tenant of the context that acquired it, so that a
// replica recovering the run can read it.
func testLeaseTenant(t *testing.T, s store.Store) {
	l, err := s.AcquireLease(tenantCtx(t, "acme"), "r-t", "replica-a", time.Millisecond)
	wantNoError(t, err, "AcquireLease in tenant acme")
	if l.Tenant != "acme" {
		t.Errorf("acquired lease has tenant %q, want acme", l.Tenant)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ls, err := s.ExpiredLeases(t.Context(), time.Now(), 10)
		wantNoError(t, err, "ExpiredLeases")
		for _, e := range ls {
			if e.RunID == "r-t" {
				if e.Tenant != "acme" {
					t.Fatalf("expired lease has tenant %q, want acme", e.Tenant)
				}
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the 1ms lease never showed up as expired")
}

// A held lease names its run's tenant: its owner extending it from another
// tenant's context does not re-tag it (recovery reads the run in the tenant
// the lease names). A lease changing hands takes the acquirer's tenant.
func testLeaseExtendKeepsTenant(t *testing.T, s store.Store) {
	_, err := s.AcquireLease(tenantCtx(t, "acme"), "r-k", "replica-a", longTTL)
	wantNoError(t, err, "AcquireLease in tenant acme")
	l, err := s.AcquireLease(tenantCtx(t, "other"), "r-k", "replica-a", longTTL)
	wantNoError(t, err, "AcquireLease again by its owner, in tenant other")
	if l.Tenant != "acme" {
		t.Errorf("extended lease has tenant %q, want acme (the tenant it was taken in)", l.Tenant)
	}
	wantNoError(t, s.ReleaseLease(t.Context(), l), "ReleaseLease")
	l, err = s.AcquireLease(tenantCtx(t, "other"), "r-k", "replica-b", longTTL)
	wantNoError(t, err, "AcquireLease of the released lease in tenant other")
	if l.Tenant != "other" {
		t.Errorf("lease taken after a release has tenant %q, want other", l.Tenant)
	}
}

func acquire(t *testing.T, s store.Store, run, owner string, ttl time.Duration) store.Lease {
	t.Helper()
	l, err := s.AcquireLease(t.Context(), run, owner, ttl)
	wantNoError(t, err, fmt.Sprintf("AcquireLease(%s, %s)", run, owner))
	if l.RunID != run || l.Owner != owner {
		t.Fatalf("AcquireLease(%s, %s) returned a lease of %s held by %s", run, owner, l.RunID, l.Owner)
	}
	return l
}

func testLeaseAcquireFree(t *testing.T, s store.Store) {
	before := time.Now()
	l := acquire(t, s, "r-1", "replica-a", longTTL)
	after := time.Now()
	if l.Generation != 1 {
		t.Errorf("Generation of a run's first lease = %d, want 1", l.Generation)
	}
	wantRecent(t, "ExpiresAt - ttl", l.ExpiresAt.Add(-longTTL), before, after)
}

func testLeaseHeld(t *testing.T, s store.Store) {
	acquire(t, s, "r-1", "replica-a", longTTL)
	_, err := s.AcquireLease(t.Context(), "r-1", "replica-b", longTTL)
	wantClass(t, err, errdefs.ClassConflict, "acquiring a lease another owner holds")
	// Leases are global: another tenant cannot take it either.
	_, err = s.AcquireLease(tenantCtx(t, "acme"), "r-1", "replica-b", longTTL)
	wantClass(t, err, errdefs.ClassConflict, "acquiring from another tenant a lease another owner holds")
}

func testLeaseOwn(t *testing.T, s store.Store) {
	first := acquire(t, s, "r-1", "replica-a", time.Minute)
	again := acquire(t, s, "r-1", "replica-a", longTTL)
	if again.Generation != first.Generation {
		t.Errorf("re-acquiring one's own lease changed Generation from %d to %d", first.Generation, again.Generation)
	}
	if !again.ExpiresAt.After(first.ExpiresAt) {
		t.Errorf("re-acquiring with a longer ttl: ExpiresAt %v, want after %v", again.ExpiresAt, first.ExpiresAt)
	}
}

// waitAcquire acquires run for owner once the current lease has expired.
func waitAcquire(t *testing.T, s store.Store, run, owner string, ttl time.Duration) store.Lease {
	t.Helper()
	var l store.Lease
	eventually(t, owner+" acquiring the expired lease of "+run, func() bool {
		var err error
		l, err = s.AcquireLease(t.Context(), run, owner, ttl)
		if err != nil && !errdefs.IsConflict(err) {
			t.Fatalf("AcquireLease(%s, %s) while waiting for expiry: got %v, want success or Conflict", run, owner, err)
		}
		return err == nil
	})
	return l
}

func testLeaseTakeOver(t *testing.T, s store.Store) {
	old := acquire(t, s, "r-1", "replica-a", shortTTL)
	taken := waitAcquire(t, s, "r-1", "replica-b", longTTL)
	if taken.Owner != "replica-b" || taken.Generation != old.Generation+1 {
		t.Errorf("lease after takeover: owner %s, generation %d; want replica-b and %d", taken.Owner, taken.Generation, old.Generation+1)
	}
	_, err := s.RenewLease(t.Context(), old, longTTL)
	wantClass(t, err, errdefs.ClassConflict, "renewing a lease that was taken over")
	wantNoError(t, s.ReleaseLease(t.Context(), old), "releasing a lost lease (a no-op)")
	_, err = s.AcquireLease(t.Context(), "r-1", "replica-c", longTTL)
	wantClass(t, err, errdefs.ClassConflict, "acquiring after the old owner released its lost lease")
	renewed, err := s.RenewLease(t.Context(), taken, longTTL)
	wantNoError(t, err, "renewing the lease held by the new owner")
	if renewed.Generation != taken.Generation || renewed.Owner != "replica-b" {
		t.Errorf("renewed lease: owner %s, generation %d; want replica-b and %d", renewed.Owner, renewed.Generation, taken.Generation)
	}
}

func testLeaseRenew(t *testing.T, s store.Store) {
	l := acquire(t, s, "r-1", "replica-a", time.Minute)
	before := time.Now()
	renewed, err := s.RenewLease(t.Context(), l, longTTL)
	after := time.Now()
	wantNoError(t, err, "renewing a held lease")
	if renewed.Generation != l.Generation || renewed.Owner != l.Owner || renewed.RunID != l.RunID {
		t.Errorf("renewed lease = %+v, want the same run, owner and generation as %+v", renewed, l)
	}
	wantRecent(t, "renewed ExpiresAt - ttl", renewed.ExpiresAt.Add(-longTTL), before, after)

	forged := l
	forged.Generation++
	_, err = s.RenewLease(t.Context(), forged, longTTL)
	wantClass(t, err, errdefs.ClassConflict, "renewing with a generation that is not the held one")
	forged = l
	forged.Owner = "replica-b"
	_, err = s.RenewLease(t.Context(), forged, longTTL)
	wantClass(t, err, errdefs.ClassConflict, "renewing as an owner that does not hold the lease")
	_, err = s.RenewLease(t.Context(), store.Lease{RunID: "r-none", Owner: "replica-a", Generation: 1}, longTTL)
	wantClass(t, err, errdefs.ClassConflict, "renewing a lease that never existed")

	short := acquire(t, s, "r-2", "replica-a", shortTTL)
	eventually(t, "the lease of r-2 expiring", func() bool {
		exp, err := s.ExpiredLeases(t.Context(), time.Now(), 10)
		wantNoError(t, err, "ExpiredLeases")
		return len(exp) == 1
	})
	_, err = s.RenewLease(t.Context(), short, longTTL)
	wantNoError(t, err, "renewing an expired lease nobody took over")
}

func testLeaseRelease(t *testing.T, s store.Store) {
	l := acquire(t, s, "r-1", "replica-a", longTTL)
	wantNoError(t, s.ReleaseLease(t.Context(), l), "ReleaseLease")
	wantNoError(t, s.ReleaseLease(t.Context(), l), "ReleaseLease twice")
	_, err := s.RenewLease(t.Context(), l, longTTL)
	wantClass(t, err, errdefs.ClassConflict, "renewing a released lease")
	next := acquire(t, s, "r-1", "replica-b", longTTL)
	if next.Generation != l.Generation+1 {
		t.Errorf("Generation after release and acquire by another owner = %d, want %d", next.Generation, l.Generation+1)
	}
	wantNoError(t, s.ReleaseLease(t.Context(), next), "ReleaseLease")
	back := acquire(t, s, "r-1", "replica-b", longTTL)
	if back.Generation != next.Generation+1 {
		t.Errorf("Generation after release and acquire by the same owner = %d, want %d", back.Generation, next.Generation+1)
	}
	wantNoError(t, s.ReleaseLease(t.Context(), back), "ReleaseLease")
	exp, err := s.ExpiredLeases(t.Context(), time.Now().Add(100*longTTL), 10)
	wantNoError(t, err, "ExpiredLeases")
	if len(exp) != 0 {
		t.Errorf("ExpiredLeases lists released leases: %+v, want none", exp)
	}
}

func testLeaseExpired(t *testing.T, s store.Store) {
	ctx := t.Context()
	start := time.Now()
	for i, run := range []string{"r-3", "r-1", "r-2"} {
		acquire(t, s, run, "replica-"+run, time.Duration(3-i)*longTTL) // r-3: 3h, r-1: 2h, r-2: 1h
	}
	expired := func(now time.Time, limit int) []string {
		t.Helper()
		ls, err := s.ExpiredLeases(ctx, now, limit)
		wantNoError(t, err, fmt.Sprintf("ExpiredLeases(%v, %d)", now, limit))
		var runs []string
		for _, l := range ls {
			if l.Owner != "replica-"+l.RunID || l.Generation != 1 {
				t.Errorf("expired lease %+v: want owner replica-%s, generation 1", l, l.RunID)
			}
			runs = append(runs, l.RunID)
		}
		return runs
	}
	wantIDs(t, "expired leases now", expired(start, 10), nil)
	wantIDs(t, "expired leases in 90 minutes", expired(start.Add(90*time.Minute), 10), []string{"r-2"})
	wantIDs(t, "expired leases in 5 hours", expired(start.Add(5*longTTL), 10), []string{"r-2", "r-1", "r-3"})
	wantIDs(t, "expired leases in 5 hours, limit 2", expired(start.Add(5*longTTL), 2), []string{"r-2", "r-1"})
	wantIDs(t, "expired leases in 5 hours, limit 0 (default)", expired(start.Add(5*longTTL), 0), []string{"r-2", "r-1", "r-3"})
	_, err := s.ExpiredLeases(ctx, start, -1)
	wantClass(t, err, errdefs.ClassValidation, "ExpiredLeases with a negative limit")
}

func testLeaseConcurrent(t *testing.T, s store.Store) {
	const claimants = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
	)
	ctx := t.Context()
	for i := range claimants {
		wg.Add(1)
		go func(owner string) {
			defer wg.Done()
			_, err := s.AcquireLease(ctx, "r-1", owner, longTTL)
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, owner)
				mu.Unlock()
			case !errdefs.IsConflict(err):
				t.Errorf("concurrent AcquireLease by %s: got %v, want success or Conflict", owner, err)
			}
		}(fmt.Sprintf("replica-%d", i))
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d concurrent claimants: winners %q, want exactly one", claimants, winners)
	}
}

func testLeaseInvalid(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name, run, owner string
		ttl              time.Duration
	}{
		{"missing run", "", "replica-a", longTTL},
		{"missing owner", "r-1", "", longTTL},
		{"zero ttl", "r-1", "replica-a", 0},
		{"negative ttl", "r-1", "replica-a", -time.Second},
	} {
		_, err := s.AcquireLease(t.Context(), c.run, c.owner, c.ttl)
		wantClass(t, err, errdefs.ClassValidation, "AcquireLease with "+c.name)
	}
	l := acquire(t, s, "r-1", "replica-a", longTTL)
	_, err := s.RenewLease(t.Context(), l, 0)
	wantClass(t, err, errdefs.ClassValidation, "RenewLease with a zero ttl")
}
