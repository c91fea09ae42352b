package storetest

import (
	"slices"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// Pending signals (run.Task.Signals) carry a pause or a feedback that
// one replica took to the replica executing the run: written as a
// versioned task update, read back by the owner's lease renewal round in
// order, each run's from its own tenant, removed again by a versioned
// update.
func testPendingSignals(t *testing.T, s store.Store) {
	acme, other := tenantCtx(t, "acme"), tenantCtx(t, "other")
	task := createTask(t, acme, s, newTask("r-sig", "c-sig", 1))
	// Another tenant's task of the same id holds signals of its own: the
	// renewal must not read them.
	decoy := createTask(t, other, s, newTask("r-sig", "c-sig", 1))
	decoy.Signals = []run.PendingSignal{{ID: "sig-other", Type: "feedback", Text: "not yours", At: at(2)}}
	apply(t, other, s, store.Change{UpdateTask: &decoy})
	l, err := s.AcquireLease(acme, "r-sig", "replica-a", longTTL)
	wantNoError(t, err, "AcquireLease")

	renewed := func() []run.PendingSignal {
		t.Helper()
		got, err := s.RenewLeases(t.Context(), []store.Lease{l}, longTTL)
		wantNoError(t, err, "RenewLeases")
		if len(got) != 1 {
			t.Fatalf("RenewLeases = %+v, want the one lease", got)
		}
		return got[0].Signals
	}
	if got := renewed(); len(got) != 0 {
		t.Fatalf("signals before any was recorded: %+v", got)
	}

	// Two signals recorded by another replica, one update each.
	pause := run.PendingSignal{ID: "sig-1", Type: "pause", Text: "lunch", At: at(3)}
	fb := run.PendingSignal{ID: "sig-2", Type: "feedback", Text: "steer " + nulText, At: at(4)}
	next := task
	next.Signals = []run.PendingSignal{pause}
	apply(t, acme, s, store.Change{UpdateTask: &next})
	stale := task
	stale.Signals = []run.PendingSignal{fb}
	wantClass(t, s.Apply(acme, store.Change{UpdateTask: &stale}), errdefs.ClassConflict, "a signal written on a stale version")
	next = getTask(t, acme, s, "r-sig")
	next.Signals = append(next.Signals, fb)
	apply(t, acme, s, store.Change{UpdateTask: &next})

	want := []run.PendingSignal{pause, fb}
	if got := getTask(t, acme, s, "r-sig").Signals; !slices.Equal(got, want) {
		t.Fatalf("GetTask signals = %+v, want %+v", got, want)
	}
	if got := renewed(); !slices.Equal(got, want) {
		t.Fatalf("renewed signals = %+v, want %+v (in order, this tenant's)", got, want)
	}

	// The owner acts on the pause: it goes, the feedback stays.
	next = getTask(t, acme, s, "r-sig")
	next.Signals = next.Signals[1:]
	apply(t, acme, s, store.Change{UpdateTask: &next, Fences: []store.Lease{l}})
	if got := renewed(); !slices.Equal(got, []run.PendingSignal{fb}) {
		t.Fatalf("renewed signals after the pause was taken = %+v, want the feedback alone", got)
	}
	next = getTask(t, acme, s, "r-sig")
	next.Signals = nil
	apply(t, acme, s, store.Change{UpdateTask: &next})
	if got := renewed(); len(got) != 0 {
		t.Fatalf("renewed signals after all were taken = %+v, want none", got)
	}
	if got := getTask(t, other, s, "r-sig").Signals; len(got) != 1 || got[0].ID != "sig-other" {
		t.Fatalf("the other tenant's task lost its signals: %+v", got)
	}
}
