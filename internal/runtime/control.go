package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// Cancel stops a task. A running task is interrupted (cause user_cancel) and
// hard-canceled after the grace period; a queued or input-required task is
// canceled at once — except an input-required task whose engine handles
// interrupts while parked, which resumes to handle it (cancelParked) and is
// returned working; a task executing on another replica gets the request
// through the store. Canceling a canceled task returns it unchanged; any
// other terminal state is ErrNotCancelable.
func (r *Runtime) Cancel(ctx context.Context, taskID string) (run.Task, error) {
	t, err := r.st.GetTask(ctx, taskID)
	if err != nil {
		return run.Task{}, err
	}
	switch {
	case t.State == run.StateCanceled:
		return t, nil
	case t.State.Terminal():
		return t, errdefs.Conflict(errorsJoin(ErrNotCancelable, "task "+t.ID+" is "+string(t.State)))
	}
	r.mu.Lock()
	var queued *execution
	if x := r.runs[taskID]; x != nil && x.launched {
		// Executing here, or just parking: ended() sees the cause and
		// cancels a run that parked meanwhile.
		x.interrupt(engine.CauseUserCancel, "canceled by the user")
		r.mu.Unlock()
		return t, nil
	} else if x != nil {
		// Queued here: it never starts.
		x.hardCancel()
		r.dequeueLocked(x)
		queued = x
	}
	if r.canceling[taskID] {
		r.mu.Unlock()
		if queued != nil {
			queued.release(false)
			r.closeEnded(queued)
		}
		return t, nil // a cancel of this task is under way
	}
	r.canceling[taskID] = true
	r.mu.Unlock()
	if queued != nil {
		queued.release(false)
		defer r.closeEnded(queued) // after the cancel is stored
	}
	defer func() {
		r.mu.Lock()
		delete(r.canceling, taskID)
		r.mu.Unlock()
	}()
	if t, err = r.st.GetTask(ctx, taskID); err != nil {
		return run.Task{}, err
	}
	if next, handled, err := r.cancelParked(ctx, t); handled || err != nil {
		return next, err // resumed to handle the cancel: it ends canceled
	}
	return r.cancelIdle(ctx, t)
}

// cancelOwner is the lease owner of a cancel in progress: distinct from the
// replica's own executions, so that releasing it never releases theirs.
func (r *Runtime) cancelOwner() string { return r.replica + "/cancel" }

// cancelIdle cancels a task that is not executing here: queued, waiting for
// input, or (with a shared store) executing on another replica — then the
// request is recorded for its owner. Callers hold the task's canceling mark.
func (r *Runtime) cancelIdle(ctx context.Context, t run.Task) (run.Task, error) {
	lease, err := r.st.AcquireLease(ctx, t.ID, r.cancelOwner(), r.leaseTTL)
	if errdefs.IsConflict(err) {
		// A live replica executes the run: record the request; the owner
		// sees it at its next lease renewal and interrupts the run.
		return r.requestCancel(ctx, t)
	}
	if err != nil {
		return run.Task{}, err
	}
	defer func() { _ = r.st.ReleaseLease(context.WithoutCancel(ctx), lease) }()
	l, err := r.logs.Acquire(ctx, t.ID)
	if err != nil {
		return run.Task{}, err
	}
	defer r.logs.Release(l)
	l.SetFence(lease) // the cancel writes under its own lease
	for attempt := 0; attempt < 5; attempt++ {
		next, evs := canceledTask(t, attempt)
		_, err = r.commit(ctx, l, store.Change{UpdateTask: &next}, evs...)
		if err == nil {
			next.Version++
			l.End()
			return next, nil
		}
		if !errdefs.IsConflict(err) {
			return run.Task{}, err
		}
		// Someone else wrote the task meanwhile: look again.
		var done bool
		if t, done, err = r.recheckCancel(ctx, t.ID); done {
			return t, err
		}
	}
	return run.Task{}, errdefs.Conflictf("task %s kept changing while being canceled; try again", t.ID)
}

// canceledTask is idle task t canceled, in the try-th attempt at it, and the
// events that say so.
func canceledTask(t run.Task, try int) (run.Task, []runlog.Entry) {
	next := t
	msg := model.NewText(model.RoleAssistant, "canceled by the user")
	msg.ID = messageID(t.ID, -1000-try-t.Attempt)
	msg.CreatedAt = storedNow()
	next.State, next.StatusMessage, next.CancelRequested = run.StateCanceled, &msg, false
	next.UpdatedAt = time.Now().UTC()
	var evs []runlog.Entry
	if t.State.Interrupted() {
		// The attempt that parked the task has ended (run.end
		// input-required): the cancel is an attempt of its own, so
		// that the log still ends with a run.end and every attempt
		// has exactly one run.start and one run.end (DESIGN §4.2).
		next.Attempt = t.Attempt + 1
		evs = append(evs, runStartEvent(RunStartData{ContextID: t.ContextID, AgentID: t.AgentID, Attempt: next.Attempt, Resumed: ResumedByCancel}))
	}
	// A submitted task's attempt opened at submission: it ends here.
	evs = append(evs, statusEvent(StatusData{State: run.StateCanceled, Message: &msg}),
		runEndEvent(RunEndData{State: run.StateCanceled, Usage: t.Usage}))
	return next, evs
}

// recheckCancel reads task id again after another writer changed it while
// it was being canceled. done says the cancel has its answer (t, err):
// the task was canceled, has ended, or started (its owner is asked);
// otherwise the caller tries again on t.
func (r *Runtime) recheckCancel(ctx context.Context, id string) (t run.Task, done bool, err error) {
	if t, err = r.st.GetTask(ctx, id); err != nil {
		return run.Task{}, true, err
	}
	switch {
	case t.State == run.StateCanceled:
		return t, true, nil
	case t.State.Terminal():
		return t, true, errdefs.Conflict(errorsJoin(ErrNotCancelable, "task "+t.ID+" is "+string(t.State)))
	case t.State == run.StateWorking:
		// It started meanwhile (elsewhere: its attempt's lease is not
		// ours): ask its owner.
		t, err = r.requestCancel(ctx, t)
		return t, true, err
	}
	return t, false, nil
}

// requestCancel records a cancel for the replica that owns the run.
func (r *Runtime) requestCancel(ctx context.Context, t run.Task) (run.Task, error) {
	t, _, err := r.updateTask(ctx, t, "being canceled", func(t run.Task) (run.Task, bool) {
		if t.CancelRequested || t.State.Terminal() {
			return t, false
		}
		t.CancelRequested = true
		return t, true
	})
	return t, err
}

// updateTask stores edit's change of task t; when the task changed
// meanwhile, it reads it again and edits that, up to five times. edit
// says false when the task as it stands needs no write: it is returned as
// it is, with written false. what names the update in the error.
func (r *Runtime) updateTask(ctx context.Context, t run.Task, what string, edit func(run.Task) (run.Task, bool)) (_ run.Task, written bool, _ error) {
	for range 5 {
		next, ok := edit(t)
		if !ok {
			return t, false, nil
		}
		err := r.st.Apply(ctx, store.Change{UpdateTask: &next})
		if err == nil {
			next.Version++
			return next, true, nil
		}
		if !errdefs.IsConflict(err) {
			return run.Task{}, false, err
		}
		if t, err = r.st.GetTask(ctx, t.ID); err != nil {
			return run.Task{}, false, err
		}
	}
	return run.Task{}, false, errdefs.Conflictf("task %s kept changing while %s; try again", t.ID, what)
}

// dequeueLocked takes a queued (never launched) execution out. Callers hold
// r.mu, and release x's lease after unlocking it: give it up (a cancel) or
// hand it over (a drain: another replica starts the task).
func (r *Runtime) dequeueLocked(x *execution) {
	delete(r.runs, x.runID)
	r.advanceLocked(x) // x is queued, not active: nothing starts
	x.log.Deactivate()
	r.logs.Release(x.log)
}

// Shutdown drains the runtime: new work is refused, running attempts get
// until ctx's deadline to finish, then are asked to checkpoint and
// interrupted (cause host_shutdown) so another replica can resume them;
// queued tasks are handed over unstarted; pending events are flushed and
// background work stops.
func (r *Runtime) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.draining = true
	r.mu.Unlock()
	r.submitting.Wait() // submissions that passed the draining check land first
	if !r.waitRuns(ctx) {
		r.interruptRunning()
		grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.grace+time.Second)
		r.waitRuns(grace)
		cancel()
	}
	r.handOverQueued()
	r.stop() // the flusher stops after a final flush
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(r.grace + 5*time.Second):
		return errors.New("runtime: an engine ignored cancellation; shutdown gave up waiting for it")
	}
}

// waitRuns waits until no launched run is left, or ctx ends (false).
func (r *Runtime) waitRuns(ctx context.Context) bool {
	for {
		if r.launched() == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// interruptRunning asks every launched run to checkpoint and stop; each is
// cancelled hard after the grace period.
func (r *Runtime) interruptRunning() {
	r.mu.Lock()
	var running []*execution
	for _, x := range r.runs {
		if x.launched {
			running = append(running, x)
		}
	}
	r.mu.Unlock()
	for _, x := range running {
		_ = engine.SuggestCheckpoint(x.agent.Engine)
		x.interrupt(engine.CauseHostShutdown, "server shutting down") // hard cancel after the grace period
	}
}

// handOverQueued drops the runs still queued here and lets their leases
// expire at once, so that another replica starts them.
func (r *Runtime) handOverQueued() {
	r.mu.Lock()
	var queued []*execution
	for _, x := range r.runs {
		if !x.launched {
			x.hardCancel()
			r.dequeueLocked(x)
			queued = append(queued, x)
		}
	}
	r.mu.Unlock()
	for _, x := range queued {
		x.release(true)
		r.closeEnded(x)
	}
}

// stop cancels the runtime's context, which stops its background work,
// and every execution it holds; an execution registered later is canceled
// as it registers.
func (r *Runtime) stop() {
	r.cancel()
	r.mu.Lock()
	for _, x := range r.runs {
		x.hardCancel()
	}
	r.mu.Unlock()
}

// usageCounter accumulates an agent's token usage.
type usageCounter struct{ n atomic.Int64 }

func (c *usageCounter) add(n int64) int64 { return c.n.Add(n) }

func (r *Runtime) agentUsage(id string) *usageCounter { return r.agentUsed[id] }

// launched counts the executions whose goroutine runs.
func (r *Runtime) launched() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.runs {
		if x.launched {
			n++
		}
	}
	return n
}
