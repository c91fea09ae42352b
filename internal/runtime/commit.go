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

// The events the runtime writes together with a state change are log
// entries. run.start, status (without a message) and run.end are written
// by hand by the log, in the shapes of the structs below (FuzzStateBodies
// holds them to encoding/json's); the rest go through encoding/json.

func runStartEvent(b RunStartData) runlog.Entry {
	return runlog.RunStart(b.ContextID, b.AgentID, b.Attempt, b.Resumed, b.Continues)
}

func statusEvent(b StatusData) runlog.Entry {
	if b.Message == nil {
		return runlog.Status(b.State, b.Error, b.Outcome)
	}
	return runlog.Entry{Type: EventStatus, Body: b}
}

func runEndEvent(b RunEndData) runlog.Entry {
	return runlog.RunEnd(b.State, b.Error, b.Usage, b.Outcome)
}

func inputEvent(b InputData) runlog.Entry { return runlog.Entry{Type: EventInput, Body: b} }

func signalEvent(b SignalData) runlog.Entry { return runlog.Entry{Type: EventSignal, Body: b} }

// commit writes change c of run l with its state events and the run's
// pending live events in one transaction (runlog.Log.Commit).
func (r *Runtime) commit(ctx context.Context, l *runlog.Log, c store.Change, evs ...runlog.Entry) (int64, error) {
	return r.commitRebasing(ctx, l, c, nil, evs...)
}

// commitRebasing is commit for writers that resolve a Conflict with rebase.
func (r *Runtime) commitRebasing(ctx context.Context, l *runlog.Log, c store.Change, rebase runlog.Rebase, evs ...runlog.Entry) (int64, error) {
	return l.Commit(ctx, c, rebase, evs...)
}

// submitPatience bounds how long a submission waits for the store: a
// client waiting on a database that is down gets a retryable 503 rather
// than a request that never ends. The change is atomic, so a retry of the
// same message finds it stored or not, never half (and a stored one holds
// a lease, which the sweep recovers if nobody runs it).
const submitPatience = 5 * time.Second

// submitCommit is commit for a client's submission, within submitPatience.
// A volatile store keeps its data in this process and never waits on a
// connection, so its commits go without the patience timer.
func (r *Runtime) submitCommit(ctx context.Context, l *runlog.Log, c store.Change, evs ...runlog.Entry) (int64, error) {
	if r.volatile {
		return r.commit(ctx, l, c, evs...)
	}
	cctx, cancel := context.WithTimeout(ctx, submitPatience)
	defer cancel()
	first, err := r.commit(cctx, l, c, evs...)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil && !errdefs.IsConflict(err) {
		err = errdefs.NotAvailable(fmt.Errorf("the store did not take the submission within %v: %w", submitPatience, err))
	}
	return first, err
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
