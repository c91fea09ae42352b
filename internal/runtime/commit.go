package runtime

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// stateEvent is an event the runtime writes together with a state change.
// Its body — RunStartData, StatusData, InputData or RunEndData — says its
// type.
type stateEvent struct {
	body any
}

// typ is the event's type.
func (e *stateEvent) typ() string {
	switch e.body.(type) {
	case RunStartData:
		return EventRunStart
	case StatusData:
		return EventStatus
	case InputData:
		return EventInput
	case RunEndData:
		return EventRunEnd
	case GapData:
		return EventGap
	case SignalData:
		return EventSignal
	}
	return ""
}

// entry is the event as the log takes it.
func (e *stateEvent) entry() runlog.Entry {
	if b, ok := e.stateBody(); ok {
		return runlog.Encoded(e.typ(), b)
	}
	return runlog.Entry{Type: e.typ(), Body: e.body}
}

// stateBody is the event's body written by hand, in the shapes runlog
// knows (FuzzStateBodies holds them to encoding/json's); ok is false for
// the rest, which the log encodes with encoding/json.
func (e *stateEvent) stateBody() (_ runlog.Body, ok bool) {
	switch b := e.body.(type) {
	case RunStartData:
		return runlog.RunStart(b.ContextID, b.AgentID, b.Attempt, b.Resumed, b.Continues), true
	case StatusData:
		if b.Message == nil {
			return runlog.Status(b.State, b.Error, b.Outcome), true
		}
	case RunEndData:
		return runlog.RunEnd(b.State, b.Error, b.Usage, b.Outcome), true
	}
	return runlog.Body{}, false
}

// commit writes change c of run l with its state events and the run's
// pending live events in one transaction (runlog.Log.Commit).
func (r *Runtime) commit(ctx context.Context, l *runlog.Log, c store.Change, evs ...stateEvent) (int64, error) {
	return r.commitRebasing(ctx, l, c, nil, evs...)
}

// commitRebasing is commit for writers that resolve a Conflict with rebase.
func (r *Runtime) commitRebasing(ctx context.Context, l *runlog.Log, c store.Change, rebase runlog.Rebase, evs ...stateEvent) (int64, error) {
	es := entries(evs)
	return l.Commit(ctx, c, rebase, es...)
}

// submitPatience bounds how long a submission waits for the store: a
// client waiting on a database that is down gets a retryable 503 rather
// than a request that never ends. The change is atomic, so a retry of the
// same message finds it stored or not, never half (and a stored one holds
// a lease, which the sweep recovers if nobody runs it).
const submitPatience = 5 * time.Second

// submitCommit is commit for a client's submission, within submitPatience.
func (r *Runtime) submitCommit(ctx context.Context, l *runlog.Log, c store.Change, evs ...stateEvent) (int64, error) {
	cctx, cancel := context.WithTimeout(ctx, submitPatience)
	defer cancel()
	first, err := r.commit(cctx, l, c, evs...)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil && !errdefs.IsConflict(err) {
		err = errdefs.NotAvailable(fmt.Errorf("the store did not take the submission within %v: %w", submitPatience, err))
	}
	return first, err
}

// entries are evs as the run log takes them.
func entries(evs []stateEvent) []runlog.Entry {
	out := make([]runlog.Entry, len(evs))
	for i, e := range evs {
		out[i] = e.entry()
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// saveCheckpoint saves cp, riding out a store that is briefly unreachable
// (a database restart). A repeated save at worst records the same
// checkpoint twice in the history.
func (r *Runtime) saveCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	return r.retry(ctx, "checkpoint save", cp.ExecID, func() error { return r.st.SaveCheckpoint(ctx, cp) })
}

// retry runs fn until it succeeds or fails with anything but NotAvailable
// (an unreachable store), backing off up to a second between tries, for as
// long as ctx and the runtime live. Only idempotent calls belong here.
func (r *Runtime) retry(ctx context.Context, what, runID string, fn func() error) error {
	backoff := 10 * time.Millisecond
	for {
		err := fn()
		if err == nil || !errdefs.IsNotAvailable(err) {
			return err
		}
		r.log.WarnContext(ctx, what+" failed; retrying", "run_id", runID, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return err
		case <-r.ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}
