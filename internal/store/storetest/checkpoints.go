package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/store"
)

func testCheckpoints(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"SaveLoadListOldestFirst": testCheckpointHistory,
		"RoundTripsEveryField":    testCheckpointRoundTrip,
		"StaleWriterIsConflict":   testCheckpointStale,
		"UnknownRun":              testCheckpointUnknown,
		"Delete":                  testCheckpointDelete,
		"TimestampDefaultsToNow":  testCheckpointTimestamp,
		"Validation":              testCheckpointInvalid,
		"WithEvents":              testCheckpointWithEvents,
		"WithEventsAllOrNothing":  testCheckpointWithEventsAtomic,
	})
}

// A change's checkpoints are saved with its events, one per run, in the
// history like any other.
func testCheckpointWithEvents(t *testing.T, s store.Store) {
	ctx := t.Context()
	saveCheckpoint(t, ctx, s, checkpoint("r-cw", 1, 1))
	c := store.Change{
		Events:      append(runEvents("r-cw", 1, 2), runEvents("r-cw2", 1, 1)...),
		Checkpoints: []engine.Checkpoint{checkpoint("r-cw", 1, 2), checkpoint("r-cw2", 1, 9)},
	}
	apply(t, ctx, s, c)
	if got := listCheckpointSteps(t, ctx, s, "r-cw"); !slices.Equal(got, []string{"step-1", "step-2"}) {
		t.Errorf("r-cw checkpoints after a change with one: %v, want [step-1 step-2]", got)
	}
	if got := loadStep(t, ctx, s, "r-cw2"); got != "step-9" {
		t.Errorf("r-cw2 newest checkpoint: %s, want step-9 (saved by the same change)", got)
	}
	cp, err := s.LoadCheckpoint(ctx, "r-cw")
	wantNoError(t, err, "LoadCheckpoint(r-cw)")
	if want := checkpoint("r-cw", 1, 2); string(cp.Payload) == "" || cp.Iteration != want.Iteration || cp.Attributes[store.AttrAttempt] != "1" {
		t.Errorf("checkpoint saved by a change: %+v, want %+v", cp, want)
	}
	dup := store.Change{Events: runEvents("r-cw", 3, 3), Checkpoints: []engine.Checkpoint{checkpoint("r-cw", 1, 3), checkpoint("r-cw", 1, 4)}}
	wantClass(t, s.Apply(ctx, dup), errdefs.ClassValidation, "Apply with two checkpoints of one run")
}

// A change whose checkpoint is stale writes none of its events, and a
// change whose events are refused (a gap, a lost fence) saves no
// checkpoint: a checkpoint is durable exactly when the events it covers
// are.
func testCheckpointWithEventsAtomic(t *testing.T, s store.Store) {
	ctx := t.Context()
	saveCheckpoint(t, ctx, s, checkpoint("r-ca", 2, 1))
	stale := store.Change{Events: runEvents("r-ca", 1, 1), Checkpoints: []engine.Checkpoint{checkpoint("r-ca", 1, 2)}}
	wantClass(t, s.Apply(ctx, stale), errdefs.ClassConflict, "Apply with a stale attempt's checkpoint")
	if page := readAll(t, ctx, s, "r-ca"); page.LastSeq != 0 {
		t.Errorf("events after a change refused for its stale checkpoint: last seq %d, want 0", page.LastSeq)
	}
	gap := store.Change{Events: runEvents("r-ca", 5, 5), Checkpoints: []engine.Checkpoint{checkpoint("r-ca", 2, 3)}}
	wantClass(t, s.Apply(ctx, gap), errdefs.ClassConflict, "Apply with a checkpoint and events that leave a gap")
	l := acquire(t, s, "r-ca", "replica-a", longTTL)
	wantNoError(t, s.ReleaseLease(ctx, l), "ReleaseLease")
	fenced := store.Change{Events: runEvents("r-ca", 1, 1), Fences: []store.Lease{l}, Checkpoints: []engine.Checkpoint{checkpoint("r-ca", 2, 4)}}
	wantClass(t, s.Apply(ctx, fenced), errdefs.ClassConflict, "Apply with a checkpoint, fenced by a released lease")
	if got := listCheckpointSteps(t, ctx, s, "r-ca"); !slices.Equal(got, []string{"step-1"}) {
		t.Errorf("checkpoints after three refused changes: %v, want [step-1]", got)
	}
}

func saveCheckpoint(t *testing.T, ctx context.Context, s store.Store, cp engine.Checkpoint) {
	t.Helper()
	wantNoError(t, s.SaveCheckpoint(ctx, cp), "SaveCheckpoint("+cp.ExecID+", "+cp.Step+")")
}

func listCheckpointSteps(t *testing.T, ctx context.Context, s store.Store, run string) []string {
	t.Helper()
	cps, err := s.ListCheckpoints(ctx, run)
	wantNoError(t, err, "ListCheckpoints("+run+")")
	steps := make([]string, len(cps))
	for i, cp := range cps {
		steps[i] = cp.Step
	}
	return steps
}

func loadStep(t *testing.T, ctx context.Context, s store.Store, run string) string {
	t.Helper()
	cp, err := s.LoadCheckpoint(ctx, run)
	wantNoError(t, err, "LoadCheckpoint("+run+")")
	if cp == nil {
		return "<none>"
	}
	return cp.Step
}

func testCheckpointHistory(t *testing.T, s store.Store) {
	ctx := t.Context()
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 1, 1))
	saveCheckpoint(t, ctx, s, checkpoint("r-2", 1, 7))
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 1, 2))
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 2, 3))
	if got := loadStep(t, ctx, s, "r-1"); got != "step-3" {
		t.Errorf("LoadCheckpoint(r-1) = %s, want step-3 (the newest)", got)
	}
	wantIDs(t, "ListCheckpoints(r-1) steps", listCheckpointSteps(t, ctx, s, "r-1"), []string{"step-1", "step-2", "step-3"})
	wantIDs(t, "ListCheckpoints(r-2) steps", listCheckpointSteps(t, ctx, s, "r-2"), []string{"step-7"})
}

func testCheckpointRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	want := checkpoint("r-1", 1, 1)
	saveCheckpoint(t, ctx, s, want)
	got, err := s.LoadCheckpoint(ctx, "r-1")
	wantNoError(t, err, "LoadCheckpoint(r-1)")
	if got == nil {
		t.Fatal("LoadCheckpoint(r-1) = nil after a save, want the checkpoint")
	}
	if !got.OriginalStartedAt.Equal(want.OriginalStartedAt) || got.SpecVersion != want.SpecVersion {
		t.Errorf("OriginalStartedAt %v, SpecVersion %q; want %v and %q", got.OriginalStartedAt, got.SpecVersion, want.OriginalStartedAt, want.SpecVersion)
	}
	wantSameJSON(t, "checkpoint read back", normCheckpoint(*got), normCheckpoint(want))
	list, err := s.ListCheckpoints(ctx, "r-1")
	wantNoError(t, err, "ListCheckpoints(r-1)")
	if len(list) != 1 {
		t.Fatalf("ListCheckpoints(r-1) returned %d checkpoints, want 1", len(list))
	}
	wantSameJSON(t, "listed checkpoint", normCheckpoint(list[0]), normCheckpoint(want))
}

func testCheckpointStale(t *testing.T, s store.Store) {
	ctx := t.Context()
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 1, 1))
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 2, 2))
	stale := checkpoint("r-1", 1, 3)
	wantClass(t, s.SaveCheckpoint(ctx, stale), errdefs.ClassConflict, "saving attempt 1's checkpoint after attempt 2's")
	noAttempt := checkpoint("r-1", 0, 4)
	delete(noAttempt.Attributes, store.AttrAttempt)
	wantClass(t, s.SaveCheckpoint(ctx, noAttempt), errdefs.ClassConflict, "saving a checkpoint without attempt (0) after attempt 2's")
	wantIDs(t, "history after stale writes", listCheckpointSteps(t, ctx, s, "r-1"), []string{"step-1", "step-2"})
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 2, 5))
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 10, 6))
	wantIDs(t, "history after same and higher attempts", listCheckpointSteps(t, ctx, s, "r-1"), []string{"step-1", "step-2", "step-5", "step-6"})

	first := checkpoint("r-2", 0, 1)
	delete(first.Attributes, store.AttrAttempt)
	saveCheckpoint(t, ctx, s, first)
}

func testCheckpointUnknown(t *testing.T, s store.Store) {
	cp, err := s.LoadCheckpoint(t.Context(), "r-none")
	if cp != nil || err != nil {
		t.Errorf("LoadCheckpoint of an unknown run = (%v, %v), want (nil, nil)", cp, err)
	}
	if steps := listCheckpointSteps(t, t.Context(), s, "r-none"); len(steps) != 0 {
		t.Errorf("ListCheckpoints of an unknown run = %v, want none", steps)
	}
	wantNoError(t, s.DeleteCheckpoints(t.Context(), "r-none"), "DeleteCheckpoints of an unknown run")
}

func testCheckpointDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 3, 1))
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 3, 2))
	saveCheckpoint(t, ctx, s, checkpoint("r-2", 1, 1))
	wantNoError(t, s.DeleteCheckpoints(ctx, "r-1"), "DeleteCheckpoints(r-1)")
	if got := loadStep(t, ctx, s, "r-1"); got != "<none>" {
		t.Errorf("LoadCheckpoint after delete = %s, want none", got)
	}
	wantIDs(t, "history after delete", listCheckpointSteps(t, ctx, s, "r-1"), nil)
	wantIDs(t, "another run's history after delete", listCheckpointSteps(t, ctx, s, "r-2"), []string{"step-1"})
	saveCheckpoint(t, ctx, s, checkpoint("r-1", 1, 9))
	wantIDs(t, "history restarted after delete", listCheckpointSteps(t, ctx, s, "r-1"), []string{"step-9"})
}

func testCheckpointTimestamp(t *testing.T, s store.Store) {
	ctx := t.Context()
	cp := checkpoint("r-1", 1, 1)
	cp.Timestamp = time.Time{}
	before := time.Now()
	saveCheckpoint(t, ctx, s, cp)
	after := time.Now()
	got, err := s.LoadCheckpoint(ctx, "r-1")
	wantNoError(t, err, "LoadCheckpoint(r-1)")
	wantRecent(t, "Timestamp of a checkpoint saved without one", got.Timestamp, before, after)
}

func testCheckpointInvalid(t *testing.T, s store.Store) {
	spoil := map[string]func(cp *engine.Checkpoint){
		"missing exec id":      func(cp *engine.Checkpoint) { cp.ExecID = "" },
		"missing board":        func(cp *engine.Checkpoint) { cp.Board = nil },
		"invalid payload":      func(cp *engine.Checkpoint) { cp.Payload = json.RawMessage(`[1,`) },
		"non-decimal attempt":  func(cp *engine.Checkpoint) { cp.Attributes[store.AttrAttempt] = "two" },
		"unencodable variable": func(cp *engine.Checkpoint) { cp.Board.Vars["f"] = func() {} },
	}
	for _, name := range sortedKeys(spoil) {
		cp := checkpoint("r-1", 1, 1)
		spoil[name](&cp)
		wantClass(t, s.SaveCheckpoint(t.Context(), cp), errdefs.ClassValidation, "SaveCheckpoint with "+name)
	}
	wantIDs(t, "history after rejected saves", listCheckpointSteps(t, t.Context(), s, "r-1"), nil)
}
