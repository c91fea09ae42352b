package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// stateEvent is an event the runtime writes together with a state change.
// Its body — RunStartData, StatusData, InputData or RunEndData — says its
// type.
type stateEvent struct {
	body any
	// encoded is the body as encoding/json encodes it, for a body the log
	// does not encode by hand (set by commitRebasing).
	encoded json.RawMessage
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
	}
	return ""
}

// commit writes one logical change of run l together with every pending
// live event of the run and the given runtime events, atomically; readers
// see the events once it succeeded (invariant 6). Transient store failures
// are retried until ctx ends; a Conflict is returned at once.
//
// It returns the seq of the first runtime event it logged.
func (r *Runtime) commit(ctx context.Context, l *runLog, c store.Change, evs ...stateEvent) (int64, error) {
	return r.commitRebasing(ctx, l, c, nil, evs...)
}

// commitRebasing is commit for writers that can resolve a Conflict: rebase
// gets the conflict, rereads what it must, and returns the change to try
// again (or an error to give up). The events are logged once, whatever the
// number of tries.
//
// The bodies the log does not encode by hand are encoded first, in place
// in evs, so that nothing can fail once the log holds the events.
func (r *Runtime) commitRebasing(ctx context.Context, l *runLog, c store.Change, rebase func(error) (store.Change, error), evs ...stateEvent) (int64, error) {
	for i := range evs {
		e := &evs[i]
		if e.encoded != nil || stateBody(e.body) {
			continue
		}
		b, err := marshalBody(e.body)
		if err != nil {
			return 0, errdefs.Internalf("encode %s event of run %s: %w", e.typ(), l.runID, err)
		}
		e.encoded = b
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	first := l.beginCommit(evs)
	pending := l.pending()
	// The log's events are encoded here (or spliced from checked payloads):
	// the store need not scan them again.
	c.Events, c.EventsValid = withEvents(c.Events, pending), true
	c.Fences = l.fences(c.Fences)
	var last int64
	if len(pending) > 0 {
		last = pending[len(pending)-1].Seq
	}
	ok := false
	defer func() {
		if l.endCommit(ok, last) {
			r.flusher.mark(l) // shown live events still to write
		}
	}()
	backoff := 10 * time.Millisecond
	uncertain := false // an earlier try's commit outcome is unknown
	for {
		err := r.st.Apply(ctx, c)
		if err != nil && uncertain && errdefs.IsConflict(err) && len(pending) > 0 && r.storedPrefix(ctx, l.runID, pending) == len(pending) {
			err = nil // the earlier try did commit (the change is atomic)
		}
		if err == nil {
			ok = true
			return first, nil
		}
		if errdefs.IsNotAvailable(err) {
			uncertain = true
		}
		if errdefs.IsConflict(err) && rebase != nil {
			next, rerr := rebase(err)
			if rerr != nil {
				return 0, rerr
			}
			next.Events, next.EventsValid = withEvents(next.Events, pending), true
			next.Fences = l.fences(next.Fences)
			c = next
			continue
		}
		if errdefs.IsConflict(err) || errdefs.IsValidation(err) || errdefs.IsNotFound(err) || ctx.Err() != nil {
			return 0, err
		}
		r.log.Warn("store write failed; retrying", "run_id", l.runID, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return 0, err
		case <-r.ctx.Done(): // the runtime was stopped hard
			return 0, err
		case <-time.After(backoff):
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}

// withEvents returns base followed by pending, without copying either
// when base is empty (the store only reads a change's events).
func withEvents(base, pending []store.Event) []store.Event {
	if len(base) == 0 {
		return pending
	}
	return append(base[:len(base):len(base)], pending...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// storedPrefix counts how many of evs (consecutive events of one run) the
// store already holds byte for byte: after a write whose commit outcome was
// unknown, a retry that conflicts may only mean the earlier try went
// through. A stored event that differs means another writer took the log.
func (r *Runtime) storedPrefix(ctx context.Context, runID string, evs []store.Event) int {
	if len(evs) == 0 {
		return 0
	}
	page, err := r.st.ReadEvents(ctx, runID, evs[0].Seq-1, len(evs))
	if err != nil {
		return 0
	}
	n := 0
	for n < len(evs) && n < len(page.Events) && page.Events[n].Seq == evs[n].Seq && bytes.Equal(page.Events[n].Data, evs[n].Data) {
		n++
	}
	return n
}

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
		r.log.Warn(what+" failed; retrying", "run_id", runID, "err", err, "backoff", backoff)
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
