package runtime

import (
	"context"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// MaxSendDelay bounds SendAfter's delay.
const MaxSendDelay = 7 * 24 * time.Hour

// SendAfter stores a new run of req that starts once delay has passed (the
// Agent Protocol's after_seconds), and returns its task, submitted.
//
// The delay is durable, and kept by the lease machinery rather than by a
// timer: the run is created as a queued run is — task, user message,
// idempotency key and first events in one commit — with a lease that this
// replica takes for the delay and never renews. Nothing executes it until
// that lease expires; then the recovery sweep of whichever replica looks
// first (this one, or another if this one died) claims it and starts it
// as attempt 1, as it starts any submitted run whose replica stopped. So
// the run starts at the earliest after delay and at the latest about one
// sweep period (a second) later, on any live replica; its context is not
// held meanwhile (a run sent to it in between is not queued behind it,
// and when the context is busy at the due time the sweep tries again).
// A canceled pending run is never started: canceled on this replica it
// is canceled at once (the lease is this replica's cancel owner's);
// canceled elsewhere the request is recorded, and the sweep that claims
// the run when it is due cancels it instead (canceledBeforeStart). One caveat, the store's: a
// PostgreSQL restarted less than delay ago lets another replica take the
// lease only once it has been up for delay (the rule that protects live
// owners after an outage), so such a run may start late, never early.
func (r *Runtime) SendAfter(ctx context.Context, req SendRequest, delay time.Duration) (run.Task, error) {
	if delay <= 0 || delay > MaxSendDelay {
		return run.Task{}, errdefs.Public(errdefs.WithField("after_seconds",
			errdefs.Validationf("a delay of %v is not between 0 and %v", delay, MaxSendDelay)))
	}
	if req.TaskID != "" {
		return run.Task{}, errdefs.Public(errdefs.Validationf("a delayed run is a new run; it cannot continue task %s", req.TaskID))
	}
	req, err := r.withAssistant(ctx, req)
	if err != nil {
		return run.Task{}, err
	}
	a, msg, err := r.checkSend(req)
	if err != nil {
		return run.Task{}, err
	}
	x := r.newTask(ctx, a, req, msg)
	defer x.hardCancel() // x never executes here: it only carries the create
	if err := r.logs.Register(x.log); err != nil {
		return run.Task{}, err
	}
	defer func() {
		x.log.Deactivate()
		r.logs.Release(x.log)
	}()
	c := store.Change{
		Idempotency: &x.key, TaskID: x.runID, CreateTask: &x.task, Messages: x.user[:],
		// The cancel owner's: a cancel on this replica takes the lease
		// over as its own and cancels the run at once.
		Lease: &store.LeaseClaim{Owner: r.cancelOwner(), TTL: delay},
	}
	evs := []runlog.Entry{
		runStartEvent(RunStartData{ContextID: x.contextID, AgentID: a.ID, Attempt: 1}),
		statusEvent(StatusData{State: run.StateSubmitted}),
	}
	if _, err := r.submitCommit(ctx, x.log, c, evs...); err != nil {
		return run.Task{}, err
	}
	return r.st.GetTask(ctx, x.runID)
}

// canceledBeforeStart handles a submitted run the sweep claimed (lease l)
// whose cancel was requested while another owner held its lease — a
// delayed run (SendAfter) canceled before it was due, or a queued run of
// a replica that died: it gives the lease back and cancels the run, which
// never starts. It reports whether it did.
func (r *Runtime) canceledBeforeStart(ctx context.Context, l store.Lease, t run.Task) bool {
	if t.State != run.StateSubmitted || !t.CancelRequested {
		return false
	}
	_ = r.st.ReleaseLease(ctx, l)
	if _, err := r.Cancel(ctx, t.ID); err != nil && !errdefs.IsConflict(err) {
		// A lease that expires at once brings the run back to a later sweep.
		if _, lerr := r.st.AcquireLease(ctx, t.ID, r.replica, time.Millisecond); lerr != nil {
			r.log.Warn("canceling a run before its start failed", "run_id", t.ID, "err", err, "lease_err", lerr)
		} else {
			r.log.Warn("canceling a run before its start failed; a later sweep tries again", "run_id", t.ID, "err", err)
		}
	}
	return true
}
