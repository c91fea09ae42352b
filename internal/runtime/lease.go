package runtime

import (
	"context"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/store"
)

// Leases make runs survive their replica. An executing attempt holds its
// run's lease and renews it; a replica that dies stops renewing, the lease
// expires, and another replica's sweep claims it (one winner, by the store's
// conditional update) and resumes the run from its last checkpoint in a new
// attempt that continues the same event log. A drain hands a run over at
// once by letting its lease expire now.

// Defaults for lease timing.
const (
	DefaultLeaseTTL = 5 * time.Second
	// maxRenewEvery also bounds how long a cancel recorded by another
	// replica takes to reach the owner.
	maxRenewEvery = time.Second
)

// acquire takes the run's lease for this replica. It rides out an
// unreachable store, and waits up to one lease period for a holder to let go
// (a cancel in progress, a replica that just died); after that the run
// belongs to someone else and acquire fails with Conflict.
func (x *execution) acquire() error {
	r := x.r
	deadline := time.Now().Add(r.leaseTTL + time.Second)
	for {
		var l store.Lease
		err := r.retry(x.ctx, "lease acquisition", x.runID, func() (err error) {
			l, err = r.st.AcquireLease(x.ctx, x.runID, r.replica, r.leaseTTL)
			return err
		})
		if err == nil {
			x.mu.Lock()
			x.lease = l
			x.mu.Unlock()
			return nil
		}
		if !errdefs.IsConflict(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-x.ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// release gives the lease up; handover lets it expire now instead, so that
// another replica resumes the run at its next sweep.
func (x *execution) release(handover bool) {
	x.leaseMu.Lock()
	defer x.leaseMu.Unlock()
	x.mu.Lock()
	l := x.lease
	x.lease = store.Lease{} // no renewal after this
	x.mu.Unlock()
	if l.RunID == "" {
		return
	}
	if handover {
		x.r.expire(x.bg, l)
	} else if err := x.r.st.ReleaseLease(x.bg, l); err != nil {
		x.r.log.Warn("lease release failed", "run_id", l.RunID, "err", err)
	}
}

// keepLeases renews the leases of the attempts executing here, stops those
// whose lease was lost, and relays cancels recorded by other replicas.
func (r *Runtime) keepLeases(ctx context.Context) {
	every := min(r.leaseTTL/3, maxRenewEvery)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		xs := make([]*execution, 0, len(r.runs))
		for _, x := range r.runs {
			xs = append(xs, x) // running and queued: both hold leases
		}
		r.mu.Unlock()
		for _, x := range xs {
			r.renew(ctx, x)
		}
	}
}

func (r *Runtime) renew(ctx context.Context, x *execution) {
	// Under leaseMu, so that a renewal cannot read the lease before a
	// release and write it after: it would extend a handed-over lease.
	x.leaseMu.Lock()
	defer x.leaseMu.Unlock()
	x.mu.Lock()
	l := x.lease
	x.mu.Unlock()
	if l.RunID == "" {
		return
	}
	tctx := store.WithTenant(ctx, x.tenant)
	nl, err := r.st.RenewLease(tctx, l, r.leaseTTL)
	switch {
	case errdefs.IsConflict(err):
		x.abandon(err)
		return
	case err != nil:
		r.log.Warn("lease renewal failed; will retry", "run_id", l.RunID, "err", err)
		return
	}
	x.mu.Lock()
	x.lease = nl
	x.mu.Unlock()
	if t, err := r.st.GetTask(tctx, l.RunID); err == nil && t.CancelRequested {
		x.interrupt(engine.CauseUserCancel, "canceled by the user")
	}
}

// sweep resumes runs whose replica stopped renewing their lease.
func (r *Runtime) sweep(ctx context.Context) {
	t := time.NewTicker(r.sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		expired, err := r.st.ExpiredLeases(ctx, time.Now(), 16)
		if err != nil {
			r.log.Warn("lease sweep failed", "err", err)
			continue
		}
		for _, l := range expired {
			if err := r.recover(ctx, l); errdefs.IsConflict(err) {
				r.log.Debug("run recovery skipped", "run_id", l.RunID, "err", err)
			} else if err != nil {
				r.log.Warn("run recovery failed", "run_id", l.RunID, "err", err)
			}
		}
	}
}

// recover claims an expired run and resumes it here in a new attempt.
func (r *Runtime) recover(ctx context.Context, expired store.Lease) error {
	r.mu.Lock()
	draining, local := r.draining, r.runs[expired.RunID] != nil
	r.mu.Unlock()
	if draining || local {
		return nil
	}
	ctx = store.WithTenant(ctx, expired.Tenant)
	l, err := r.st.AcquireLease(ctx, expired.RunID, r.replica, r.leaseTTL)
	if err != nil {
		return err // Conflict: another replica won
	}
	t, err := r.st.GetTask(ctx, expired.RunID)
	if err != nil {
		r.expire(ctx, l)
		return err
	}
	a, aerr := r.Agent(t.AgentID)
	if (t.State != store.StateWorking && t.State != store.StateSubmitted) || aerr != nil {
		// Ended, parked for input, or an agent this replica does not host.
		r.log.Debug("expired lease needs no recovery", "run_id", t.ID, "state", t.State, "agent_err", aerr)
		_ = r.st.ReleaseLease(ctx, l)
		return aerr
	}
	log, err := r.activeLog(ctx, t.ID)
	if err != nil {
		r.expire(ctx, l)
		return err
	}
	msg := userMessageOf(ctx, r, t)
	next, resume := t, ""
	if t.State == store.StateWorking {
		next.Attempt++
		next.UpdatedAt = time.Now().UTC()
		resume = engine.SignalCrash
	}
	r.mu.Lock()
	if q := r.contexts[t.ContextID]; q != nil && q.active != "" {
		r.mu.Unlock()
		log.mu.Lock()
		log.active = false
		log.mu.Unlock()
		r.releaseLog(log)
		r.expire(ctx, l) // try again at a later sweep
		return errdefs.Conflictf("context %s is busy here", t.ContextID)
	}
	r.contexts[t.ContextID] = &contextQueue{active: t.ID}
	x := r.newExecution(a, next, log, msg, resume)
	x.lease = l
	r.registerLocked(x)
	r.mu.Unlock()

	if t.State == store.StateWorking {
		// A replica that died never wrote its attempt's run.end (a drain
		// did): close the attempt if needed, then open the new one, in one
		// commit.
		var evs []stateEvent
		if !r.attemptClosed(ctx, t.ID) {
			evs = append(evs, stateEvent{body: RunEndData{State: store.StateWorking, Usage: t.Usage,
				Error: &store.TaskError{Class: string(errdefs.ClassAborted), Message: "the replica executing this attempt stopped"}}})
		}
		evs = append(evs,
			stateEvent{body: RunStartData{ContextID: t.ContextID, AgentID: a.ID, Attempt: next.Attempt, Resumed: engine.SignalCrash}},
			stateEvent{body: StatusData{State: store.StateWorking}})
		_, err = r.commit(ctx, log, store.Change{UpdateTask: &next}, evs...)
		if err != nil {
			x.createErr = err
			close(x.created)
			r.forget(x)
			r.expire(ctx, l)
			return err
		}
		x.task.Version = next.Version + 1
	}
	// A submitted task never started: it starts here as attempt 1.
	close(x.created)
	r.log.Info("resuming run after its replica stopped", "run_id", t.ID, "attempt", next.Attempt)
	r.launch(x)
	return nil
}

// attemptClosed reports whether the run's log ends with a run.end.
func (r *Runtime) attemptClosed(ctx context.Context, runID string) bool {
	last := r.logEnd(ctx, runID)
	if last == 0 {
		return true
	}
	page, err := r.st.ReadEvents(ctx, runID, last-1, 1)
	return err == nil && len(page.Events) == 1 && page.Events[0].Type == EventRunEnd
}

// expire lets a lease lapse at once, so that a later sweep (here or on
// another replica) takes the run up again.
func (r *Runtime) expire(ctx context.Context, l store.Lease) {
	if _, err := r.st.RenewLease(ctx, l, time.Nanosecond); err != nil {
		r.log.Warn("lease hand-over failed", "run_id", l.RunID, "err", err)
	}
}

// userMessageOf finds the user message that opened the run's latest
// attempt, for the agent request of a recovered attempt.
func userMessageOf(ctx context.Context, r *Runtime, t store.Task) (m model.Message) {
	page, err := r.st.ListMessages(ctx, store.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Last: 50})
	if err != nil {
		return m
	}
	for i := len(page.Messages) - 1; i >= 0; i-- {
		if page.Messages[i].Role == model.RoleUser {
			return page.Messages[i].Message
		}
	}
	return m
}
