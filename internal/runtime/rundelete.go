package runtime

import (
	"context"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// runDeleter returns the store's run deletion, looking through wrappers
// that expose Unwrap (the metrics' store).
func (r *Runtime) runDeleter() (store.RunDeleter, error) {
	st := r.st
	for {
		if d, ok := st.(store.RunDeleter); ok {
			return d, nil
		}
		u, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			return nil, errdefs.Public(errdefs.NotAvailablef("this server's store does not delete runs"))
		}
		st = u.Unwrap()
	}
}

// DeleteRun deletes a run of the caller's tenant that is not executing:
// its task, events, checkpoints, push configs and transcript messages. A
// run waiting for input is canceled first; a queued or running one is a
// Conflict (cancel it, or roll it back with RollbackRun).
func (r *Runtime) DeleteRun(ctx context.Context, id string) error {
	d, err := r.runDeleter()
	if err != nil {
		return err
	}
	t, err := r.st.GetTask(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case t.State.Interrupted():
		if _, err := r.Cancel(ctx, id); err != nil && !errdefs.IsConflict(err) {
			return err
		}
		if t, err = r.waitTerminal(ctx, id); err != nil {
			return err
		}
	case !t.State.Terminal():
		return errdefs.Public(errdefs.Conflictf("run %s is %s; cancel it before deleting it", id, t.State))
	}
	return d.DeleteRun(ctx, t.ID)
}

// RollbackRun cancels the run, waits for it to stop, and deletes it as
// DeleteRun does: what it did is no longer part of its context (the
// Agent Protocol's rollback).
func (r *Runtime) RollbackRun(ctx context.Context, id string) error {
	d, err := r.runDeleter()
	if err != nil {
		return err
	}
	if _, err := r.Cancel(ctx, id); err != nil && !errdefs.IsConflict(err) {
		return err
	}
	t, err := r.waitTerminal(ctx, id)
	if err != nil {
		return err
	}
	return d.DeleteRun(ctx, t.ID)
}

// waitTerminal waits for the canceled run id to reach a terminal state; a
// run that parked for input meanwhile (its cancel resumed it to handle
// the interrupt) is canceled again.
func (r *Runtime) waitTerminal(ctx context.Context, id string) (run.Task, error) {
	for {
		t, err := r.Wait(ctx, id)
		if err != nil || t.State.Terminal() {
			return t, err
		}
		if _, err := r.Cancel(ctx, id); err != nil && !errdefs.IsConflict(err) {
			return t, err
		}
		select { // the cancel of a parked run lands through the store
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ActiveRuns returns the runs of the context that are queued or
// executing, oldest first.
func (r *Runtime) ActiveRuns(ctx context.Context, contextID string) ([]run.Task, error) {
	page, err := r.st.ListTasks(ctx, run.TaskQuery{
		ContextID: contextID, States: []run.TaskState{run.StateSubmitted, run.StateWorking}, Limit: 100,
	})
	if err != nil {
		return nil, err
	}
	out := page.Tasks
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
