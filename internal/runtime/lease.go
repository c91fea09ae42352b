package runtime

import (
	"context"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
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
			x.setLease(l)
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

// leaseClaim is the lease a commit that makes a run runnable takes for
// this replica (store.Change.Lease).
func (r *Runtime) leaseClaim() *store.LeaseClaim {
	return &store.LeaseClaim{Owner: r.replica, TTL: r.leaseTTL}
}

// holdLease records the lease a commit granted. A commit whose answer was
// lost, and which a retry found stored, granted one this replica does not
// know of: run acquires it (its own) then.
func (x *execution) holdLease(l store.Lease) {
	if l.RunID == "" {
		return
	}
	x.setLease(l)
}

// leaseLocked is the lease x holds. An attempt whose create was deferred
// holds none until the write that carried the create landed: the lease
// that write claimed is x's from then on, taken from the create at the
// first look after it. Callers hold x.mu.
func (x *execution) leaseLocked() store.Lease {
	if x.lease.RunID == "" && x.create != nil {
		x.lease = x.create.TakeLease()
	}
	return x.lease
}

// setLease records the lease x holds; every write of the run's log is
// fenced by it from now on (runlog.Log.SetFence), until another attempt.
func (x *execution) setLease(l store.Lease) {
	x.mu.Lock()
	x.lease = l
	x.mu.Unlock()
	x.log.SetFence(l)
}

// release gives the lease up; handover lets it expire now instead, so that
// another replica resumes the run at its next sweep.
func (x *execution) release(handover bool) {
	x.leaseMu.Lock()
	defer x.leaseMu.Unlock()
	x.mu.Lock()
	l := x.leaseLocked()
	x.lease = store.Lease{} // no renewal after this
	x.mu.Unlock()
	if l.RunID == "" {
		return
	}
	// The log stays fenced by the lease given up: events of this attempt
	// still pending (an attempt that lost its lease stops a little after
	// learning of it) must not reach the log. The next attempt on this
	// replica starts unfenced (runlog.Logs.Activate) and takes its own.
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
		r.renewAll(ctx, xs)
	}
}

// renewAll renews the leases of xs in one store call (however many runs a
// replica executes, a round is one round trip), abandons the attempts whose
// lease was lost, interrupts those whose task records a cancel, and hands
// each the pause and feedback signals recorded on its task.
func (r *Runtime) renewAll(ctx context.Context, xs []*execution) {
	// Each execution's leaseMu is held across the call, so that a renewal
	// cannot read a lease before its release or hand-over and write it
	// after: it would extend a lease given up meanwhile. Only release and
	// leaseToGive take a leaseMu besides, briefly, and hold no other.
	held := make([]*execution, 0, len(xs))
	leases := make([]store.Lease, 0, len(xs))
	for _, x := range xs {
		x.leaseMu.Lock()
		x.mu.Lock()
		l := x.leaseLocked()
		x.mu.Unlock()
		if l.RunID == "" {
			x.leaseMu.Unlock()
			continue
		}
		held, leases = append(held, x), append(leases, l)
	}
	if len(held) == 0 {
		return
	}
	// A renewal that takes longer than the lease is worth nothing, and the
	// leaseMus must not stay held by a query a partition holds up.
	rctx, cancel := context.WithTimeout(ctx, r.leaseTTL)
	renewed, err := r.st.RenewLeases(rctx, leases, r.leaseTTL)
	cancel()
	if err != nil {
		for _, x := range held {
			x.leaseMu.Unlock()
		}
		r.noteStoreError(errdefs.NotAvailable(err))
		r.log.Warn("lease renewal failed; will retry", "runs", len(held), "err", err)
		r.giveUpLapsed(held) // outage.go
		return
	}
	byRun := make(map[string]store.RenewedLease, len(renewed))
	for _, rl := range renewed {
		byRun[rl.RunID] = rl
	}
	for _, x := range held {
		rl, ok := byRun[x.runID]
		if ok {
			x.mu.Lock()
			x.lease = rl.Lease
			x.mu.Unlock()
		}
		x.leaseMu.Unlock()
		switch {
		case !ok:
			x.abandon(errdefs.Conflictf("the lease on run %s was taken over by another replica", x.runID))
		case rl.CancelRequested:
			x.interrupt(engine.CauseUserCancel, "canceled by the user")
		}
		if ok && len(rl.Signals) > 0 {
			x.deliverStored(rl.Signals) // recorded by another replica (signals_relay.go)
		}
	}
}

// sweep resumes runs whose replica stopped renewing their lease, and parked
// runs whose prompt expired.
func (r *Runtime) sweep(ctx context.Context) {
	t := time.NewTicker(r.sweepEvery)
	defer t.Stop()
	prompts := newPromptSweep(r)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.recentStoreTrouble() {
			continue
		}
		// Room beyond the leases live owners keep through an outage (they
		// expired first and stay listed until the bound passes).
		expired, err := r.st.ExpiredLeases(ctx, time.Now(), 64)
		if err != nil {
			r.noteStoreError(err)
			r.log.Warn("lease sweep failed", "err", err)
			continue
		}
		probes := r.probeRound() // outage.go
		for _, l := range expired {
			if probes.ownerKeeps(ctx, l) {
				continue
			}
			if err := r.recover(ctx, l); errdefs.IsConflict(err) {
				r.log.Debug("run recovery skipped", "run_id", l.RunID, "err", err)
			} else if err != nil {
				r.log.Warn("run recovery failed", "run_id", l.RunID, "err", err)
			}
		}
		prompts.round(ctx) // parked runs whose prompt expired (parked.go)
	}
}

// noteStoreError records when the store was last found unreachable.
func (r *Runtime) noteStoreError(err error) {
	if errdefs.IsNotAvailable(err) {
		r.storeTrouble.Store(time.Now().UnixNano())
	}
}

// recentStoreTrouble reports whether this replica lost the store less than
// a lease period ago. Its sweep waits that long: when this replica was cut
// off, the others may have been too, and their leases expired with nobody
// dead — they need a lease period to renew before anyone takes their runs
// (the store's own rule covers a restart of the database; this one covers
// the network between).
func (r *Runtime) recentStoreTrouble() bool {
	at := r.storeTrouble.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < r.leaseTTL
}

// recover claims an expired run and resumes it here in a new attempt.
func (r *Runtime) recover(ctx context.Context, expired store.Lease) error {
	r.mu.Lock()
	draining, local := r.draining, r.runs[expired.RunID] != nil
	r.mu.Unlock()
	if draining || local {
		return nil
	}
	ctx = run.WithTenant(ctx, expired.Tenant)
	l, t, a, err := r.claimExpired(ctx, expired.RunID)
	if err != nil || a == nil {
		return err
	}
	x, err := r.adoptExpired(ctx, a, t, l)
	if err != nil {
		return err
	}
	if t.State == run.StateWorking {
		if err := r.reopen(ctx, x, t, expired); err != nil {
			x.createErr = err
			close(x.created)
			r.forget(x)
			r.expire(ctx, l)
			return err
		}
	}
	// A submitted task never started: it starts here as attempt 1.
	close(x.created)
	r.log.Info("resuming run after its replica stopped", "run_id", t.ID, "attempt", x.task.Attempt)
	r.launch(x)
	return nil
}

// claimExpired takes over the lease of run runID and reads its task. A nil
// agent means the run needs no recovery here: it ended, parked for input,
// or belongs to an agent this replica does not host (then the error says
// so); the lease is given back.
func (r *Runtime) claimExpired(ctx context.Context, runID string) (store.Lease, run.Task, *Agent, error) {
	l, err := r.st.AcquireLease(ctx, runID, r.replica, r.leaseTTL)
	if err != nil {
		return l, run.Task{}, nil, err // Conflict: another replica won
	}
	t, err := r.st.GetTask(ctx, runID)
	if err != nil {
		r.expire(ctx, l)
		return l, t, nil, err
	}
	if r.canceledBeforeStart(ctx, l, t) { // delayed.go
		return l, t, nil, nil
	}
	a, aerr := r.Agent(t.AgentID)
	if (t.State != run.StateWorking && t.State != run.StateSubmitted) || aerr != nil {
		r.log.Debug("expired lease needs no recovery", "run_id", t.ID, "state", t.State, "agent_err", aerr)
		_ = r.st.ReleaseLease(ctx, l)
		return l, t, nil, aerr
	}
	return l, t, a, nil
}

// adoptExpired registers the recovery of task t, whose lease l this
// replica holds, as a run of its own: a working task goes on in its next
// attempt, resumed after a crash. It fails when the task's context is
// busy here (a later sweep tries again).
func (r *Runtime) adoptExpired(ctx context.Context, a *Agent, t run.Task, l store.Lease) (*execution, error) {
	log, err := r.logs.Activate(ctx, t.ID)
	if err != nil {
		r.expire(ctx, l)
		return nil, err
	}
	msg := userMessageOf(ctx, r, t)
	next, resume := t, ""
	if t.State == run.StateWorking {
		next.Attempt++
		next.UpdatedAt = time.Now().UTC()
		resume = engine.SignalCrash
	}
	r.mu.Lock()
	key := contextKey(tenantOf(t), t.ContextID)
	if q := r.contexts[key]; q != nil && q.active != "" {
		r.mu.Unlock()
		log.Deactivate()
		r.logs.Release(log)
		r.expire(ctx, l) // try again at a later sweep
		return nil, errdefs.Conflictf("context %s is busy here", t.ContextID)
	}
	r.contexts[key] = &contextQueue{active: t.ID}
	x := r.newExecution(a, next, log, msg, resume)
	x.setLease(l)
	r.registerLocked(x)
	r.mu.Unlock()
	return x, nil
}

// reopen records, for the recovery x of working task t, that the attempt
// of the replica that died ended and x's attempt starts. That replica never
// wrote its attempt's run.end (a drain did): the attempt is closed if
// needed, then the new one opened, in one commit.
func (r *Runtime) reopen(ctx context.Context, x *execution, t run.Task, expired store.Lease) error {
	var evs []runlog.Entry
	if !r.attemptClosed(ctx, t.ID) {
		evs = append(evs, runEndEvent(RunEndData{State: run.StateWorking, Usage: t.Usage,
			Error: &run.TaskError{Class: string(errdefs.ClassAborted), Message: lapsedLease(expired)}}))
	}
	evs = append(evs,
		runStartEvent(RunStartData{ContextID: t.ContextID, AgentID: x.agent.ID, Attempt: x.task.Attempt, Resumed: engine.SignalCrash,
			Continues: engine.CapabilitiesOf(x.agent.Engine).ResumeContinuesOutput}),
		statusEvent(StatusData{State: run.StateWorking}))
	if _, err := r.commit(ctx, x.log, store.Change{UpdateTask: &x.task}, evs...); err != nil {
		return err
	}
	x.task.Version++
	return nil
}

// lapsedLease explains the end of an attempt whose lease another replica
// took over: all a replica knows is that the owner stopped renewing, which
// it does when it dies or when it loses the database for longer than a
// lease (a live owner that merely saw the database restart keeps its
// runs: see store.Leases).
func lapsedLease(l store.Lease) string {
	return "replica " + l.Owner + " stopped renewing this attempt's lease (it stopped, or lost its connection to the database); the run resumed from its last checkpoint"
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
func userMessageOf(ctx context.Context, r *Runtime, t run.Task) (m model.Message) {
	page, err := r.st.ListMessages(ctx, run.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Last: 50})
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
