package storetest

import (
	"context"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// RunPrunerSuite runs the contract of store.Pruner (retention) against the
// stores newStore returns, which must implement it: finished runs of every
// tenant lose their events and checkpoints, oldest first, in batches;
// their tasks stay; their logs read as pruned through their last event;
// runs still going, and runs that finished after the cutoff, keep
// everything.
func RunPrunerSuite(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	t.Run("PruneFinished", func(t *testing.T) { testPruneFinished(t, newStore(t)) })
}

// finishRun creates task id in ctx's tenant, with events 1..n and a
// checkpoint, and moves it to state.
func finishRun(t *testing.T, ctx context.Context, s store.Store, id string, n int64, state run.TaskState) run.Task {
	t.Helper()
	task := createTask(t, ctx, s, newTask(id, "c-"+id, 1))
	appendEvents(t, ctx, s, id, 1, n)
	wantNoError(t, s.SaveCheckpoint(ctx, checkpoint(id, 1, 1)), "SaveCheckpoint("+id+")")
	upd := task
	upd.State = state
	apply(t, ctx, s, store.Change{TaskID: id, UpdateTask: &upd})
	return getTask(t, ctx, s, id)
}

func testPruneFinished(t *testing.T, s store.Store) {
	p, ok := s.(store.Pruner)
	if !ok {
		t.Fatalf("%T does not implement store.Pruner", s)
	}
	a, b := tenantCtx(t, "tenant-a"), tenantCtx(t, "tenant-b")
	done1 := finishRun(t, a, s, "r-done-1", 3, run.StateCompleted)
	done2 := finishRun(t, b, s, "r-done-2", 2, run.StateFailed)
	working := createTask(t, a, s, newTask("r-working", "c-w", 1))
	appendEvents(t, a, s, working.ID, 1, 4)
	cutoff := done2.UpdatedAt.Add(time.Microsecond)
	for !time.Now().After(cutoff.Add(time.Millisecond)) {
		// the next run must finish after the cutoff, at the stores'
		// microsecond resolution
	}
	late := finishRun(t, a, s, "r-late", 2, run.StateCanceled)
	if !late.UpdatedAt.After(cutoff) {
		t.Fatalf("the late run finished at %v, not after the cutoff %v", late.UpdatedAt, cutoff)
	}

	_, err := p.PruneFinished(t.Context(), store.PruneQuery{Before: cutoff})
	wantClass(t, err, errdefs.ClassValidation, "PruneFinished without a limit")

	first, err := p.PruneFinished(t.Context(), store.PruneQuery{Before: cutoff, Limit: 1})
	wantNoError(t, err, "PruneFinished(limit 1)")
	if first.Runs != 1 || first.Events != 3 || first.Checkpoints != 1 || !first.Through.Equal(done1.UpdatedAt) {
		t.Fatalf("first batch %+v, want the oldest run: 1 run, 3 events, 1 checkpoint, through %v", first, done1.UpdatedAt)
	}
	rest, err := p.PruneFinished(t.Context(), store.PruneQuery{Before: cutoff, After: first.Through, Limit: 10})
	wantNoError(t, err, "PruneFinished(the rest)")
	if rest.Runs != 1 || rest.Events != 2 || rest.Checkpoints != 1 {
		t.Fatalf("second batch %+v, want 1 run, 2 events, 1 checkpoint (tenant-b's)", rest)
	}
	again, err := p.PruneFinished(t.Context(), store.PruneQuery{Before: cutoff, Limit: 10})
	wantNoError(t, err, "PruneFinished(again)")
	if again.Runs != 0 {
		t.Fatalf("third batch %+v, want nothing left", again)
	}

	for _, r := range []struct {
		ctx          context.Context
		id           string
		last, pruned int64
		checkpoint   bool
	}{
		{a, done1.ID, 3, 3, false},
		{b, done2.ID, 2, 2, false},
		{a, working.ID, 4, 0, false},
		{a, late.ID, 2, 0, true},
	} {
		page, err := s.ReadEvents(r.ctx, r.id, 0, 100)
		wantNoError(t, err, "ReadEvents("+r.id+")")
		if page.LastSeq != r.last || page.PrunedThrough != r.pruned || len(page.Events) != int(r.last-r.pruned) {
			t.Errorf("run %s: LastSeq %d, PrunedThrough %d, %d events; want %d, %d, %d", r.id, page.LastSeq, page.PrunedThrough, len(page.Events), r.last, r.pruned, r.last-r.pruned)
		}
		cp, err := s.LoadCheckpoint(r.ctx, r.id)
		wantNoError(t, err, "LoadCheckpoint("+r.id+")")
		if (cp != nil) != r.checkpoint && r.id != working.ID {
			t.Errorf("run %s: checkpoint kept %v, want %v", r.id, cp != nil, r.checkpoint)
		}
		getTask(t, r.ctx, s, r.id) // the task stays
	}
}
