package runtime

import (
	"context"
	"time"

	"agentd/internal/errdefs"
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
// A canceled pending run is never started. One caveat, the store's: a
// PostgreSQL restarted less than delay ago lets another replica take the
// lease only once it has been up for delay (the rule that protects live
// owners after an outage), so such a run may start late, never early.
func (r *Runtime) SendAfter(ctx context.Context, req SendRequest, delay time.Duration) (store.Task, error) {
	if delay <= 0 || delay > MaxSendDelay {
		return store.Task{}, errdefs.Public(errdefs.WithField("after_seconds",
			errdefs.Validationf("a delay of %v is not between 0 and %v", delay, MaxSendDelay)))
	}
	if req.TaskID != "" {
		return store.Task{}, errdefs.Public(errdefs.Validationf("a delayed run is a new run; it cannot continue task %s", req.TaskID))
	}
	a, msg, err := r.checkSend(req)
	if err != nil {
		return store.Task{}, err
	}
	x := r.newTask(ctx, a, req, msg)
	defer x.hardCancel() // x never executes here: it only carries the create
	if err := r.logs.Register(x.log); err != nil {
		return store.Task{}, err
	}
	defer func() {
		x.log.Deactivate()
		r.logs.Release(x.log)
	}()
	c := store.Change{
		Idempotency: &x.key, TaskID: x.runID, CreateTask: &x.task, Messages: x.user[:],
		Lease: &store.LeaseClaim{Owner: r.replica, TTL: delay},
	}
	evs := []stateEvent{
		{body: RunStartData{ContextID: x.contextID, AgentID: a.ID, Attempt: 1}},
		{body: StatusData{State: store.StateSubmitted}},
	}
	if _, err := r.submitCommit(ctx, x.log, c, evs...); err != nil {
		return store.Task{}, err
	}
	return r.st.GetTask(ctx, x.runID)
}
