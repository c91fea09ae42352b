package storetest

import (
	"context"
	"encoding/json"
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
	})
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
