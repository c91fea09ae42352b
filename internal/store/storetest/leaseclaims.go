package storetest

import (
	"slices"
	"strconv"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// A change that makes a run runnable claims its lease in the same
// transaction: the task and its lease are committed together or not at
// all, so no replica can die between them and orphan the run.
func testLeaseClaimedByChange(t *testing.T, s store.Store) {
	ctx := t.Context()
	claim := &store.LeaseClaim{Owner: "replica-a", TTL: longTTL}
	apply(t, ctx, s, store.Change{TaskID: "t-claim", CreateTask: newTask("t-claim", "c-claim", 1), Lease: claim})
	g := claim.Granted
	if g.RunID != "t-claim" || g.Owner != "replica-a" || g.Generation < 1 || g.ExpiresAt.IsZero() {
		t.Fatalf("granted lease = %+v, want run t-claim held by replica-a", g)
	}
	_, err := s.AcquireLease(ctx, "t-claim", "replica-b", longTTL)
	wantClass(t, err, errdefs.ClassConflict, "AcquireLease of a lease a change claimed")
	renewed, err := s.RenewLease(ctx, g, longTTL)
	wantNoError(t, err, "renewing the lease a change granted")
	if renewed.Generation != g.Generation {
		t.Errorf("renewed generation %d, want the granted %d", renewed.Generation, g.Generation)
	}

	// Another owner's live lease refuses the change whole: no task.
	held := acquire(t, s, "t-held", "replica-b", longTTL)
	other := &store.LeaseClaim{Owner: "replica-a", TTL: longTTL}
	err = s.Apply(ctx, store.Change{TaskID: "t-held", CreateTask: newTask("t-held", "c-held", 1), Lease: other})
	wantClass(t, err, errdefs.ClassConflict, "Apply claiming a lease another owner holds")
	if _, err := s.GetTask(ctx, "t-held"); !errdefs.IsNotFound(err) {
		t.Errorf("GetTask after the refused change: %v, want NotFound (nothing written)", err)
	}
	if other.Granted.RunID != "" {
		t.Errorf("a refused claim was granted %+v", other.Granted)
	}
	wantNoError(t, s.ReleaseLease(ctx, held), "ReleaseLease")
	apply(t, ctx, s, store.Change{TaskID: "t-held", CreateTask: newTask("t-held", "c-held", 1), Lease: other})
	if other.Granted.Generation <= held.Generation {
		t.Errorf("claim after a release: generation %d, want above the released %d", other.Granted.Generation, held.Generation)
	}

	err = s.Apply(ctx, store.Change{TaskID: "t-bad", CreateTask: newTask("t-bad", "c-bad", 1), Lease: &store.LeaseClaim{Owner: "", TTL: longTTL}})
	wantClass(t, err, errdefs.ClassValidation, "Apply claiming a lease without an owner")
}

// RenewLeases renews what is still held, leaves out what was lost, and
// reports each run's cancel request.
func testRenewLeases(t *testing.T, s store.Store) {
	ctx := t.Context()
	kept := &store.LeaseClaim{Owner: "replica-a", TTL: longTTL}
	apply(t, ctx, s, store.Change{TaskID: "t-kept", CreateTask: newTask("t-kept", "c-kept", 1), Lease: kept})
	canceled := createTask(t, ctx, s, newTask("t-canceled", "c-canceled", 2))
	canceled.CancelRequested = true
	apply(t, ctx, s, store.Change{UpdateTask: &canceled})
	cl := acquire(t, s, "t-canceled", "replica-a", longTTL)
	lost := acquire(t, s, "t-lost", "replica-a", shortTTL)
	taken := waitAcquire(t, s, "t-lost", "replica-b", longTTL)

	got, err := s.RenewLeases(ctx, []store.Lease{kept.Granted, cl, lost}, longTTL)
	wantNoError(t, err, "RenewLeases")
	var ids []string
	for _, r := range got {
		ids = append(ids, r.RunID)
		if r.Owner != "replica-a" {
			t.Errorf("renewed %s: owner %q, want replica-a", r.RunID, r.Owner)
		}
		if want := r.RunID == "t-canceled"; r.CancelRequested != want {
			t.Errorf("renewed %s: cancel requested %v, want %v", r.RunID, r.CancelRequested, want)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"t-canceled", "t-kept"}) {
		t.Errorf("RenewLeases renewed %v, want [t-canceled t-kept] (t-lost was taken over)", ids)
	}
	if _, err := s.RenewLease(ctx, taken, longTTL); err != nil {
		t.Errorf("the new owner's lease after the old owner's batch: %v", err)
	}
	none, err := s.RenewLeases(ctx, nil, longTTL)
	wantNoError(t, err, "RenewLeases of nothing")
	if len(none) != 0 {
		t.Errorf("RenewLeases(nil) = %v, want nothing", none)
	}
	_, err = s.RenewLeases(ctx, []store.Lease{cl}, 0)
	wantClass(t, err, errdefs.ClassValidation, "RenewLeases with a zero ttl")
}

// A change fenced by a lease applies only while that lease is held as it
// says: after a takeover, the old owner can no longer add to the run's log.
func testLeaseFences(t *testing.T, s store.Store) {
	ctx := t.Context()
	old := acquire(t, s, "r-fence", "replica-a", shortTTL)
	ev := func(seq int64) []run.Event {
		return []run.Event{{RunID: "r-fence", Seq: seq, Type: "delta", Data: []byte(`{"seq":` + itoa64(seq) + `}`)}}
	}
	apply(t, ctx, s, store.Change{Events: ev(1), Fences: []store.Lease{old}})
	taken := waitAcquire(t, s, "r-fence", "replica-b", longTTL)
	err := s.Apply(ctx, store.Change{Events: ev(2), Fences: []store.Lease{old}})
	wantClass(t, err, errdefs.ClassConflict, "Apply fenced by a lease that was taken over")
	page, err := s.ReadEvents(ctx, "r-fence", 0, 10)
	wantNoError(t, err, "ReadEvents")
	if page.LastSeq != 1 {
		t.Fatalf("log after the refused write: last seq %d, want 1 (nothing written)", page.LastSeq)
	}
	apply(t, ctx, s, store.Change{Events: ev(2), Fences: []store.Lease{taken}})
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// A change that releases its own lease gives it up in the same transaction,
// after its fences were checked: another owner may take the run at once.
// A release of a lease no longer held changes nothing.
func testLeaseReleasedByChange(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, "r-release", "replica-a", longTTL)
	ev := []run.Event{{RunID: "r-release", Seq: 1, Type: "run.end", Data: []byte(`{"seq":1}`)}}
	apply(t, ctx, s, store.Change{Events: ev, Fences: []store.Lease{l}, Release: &l})
	taken, err := s.AcquireLease(ctx, "r-release", "replica-b", longTTL)
	wantNoError(t, err, "AcquireLease after a change released the lease")
	if taken.Generation <= l.Generation {
		t.Errorf("generation after the release %d, want above the released %d", taken.Generation, l.Generation)
	}
	apply(t, ctx, s, store.Change{Release: &l}) // held by replica-b now: left alone
	_, err = s.RenewLease(ctx, taken, longTTL)
	wantNoError(t, err, "renewing replica-b's lease after a stale release")
}
