package runtime

import (
	"context"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// heldEvent is a runtime event that becomes visible only once durable.
type heldEvent struct {
	typ  string
	body any
}

// commit writes one logical change of run l together with every pending
// live event of the run and the given runtime events, atomically, and only
// then lets readers see the new events (invariant 6). Transient store
// failures are retried until ctx ends; a Conflict is returned at once.
//
// It returns the seq of the first runtime event it logged.
func (r *Runtime) commit(ctx context.Context, l *runLog, c store.Change, evs ...heldEvent) (int64, error) {
	bodies := make([][]byte, len(evs))
	for i, e := range evs {
		b, err := encodeBody(e.body)
		if err != nil {
			return 0, errdefs.Internalf("encode %s event of run %s: %w", e.typ, l.runID, err)
		}
		bodies[i] = b
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	first := l.last() + 1
	for i, e := range evs {
		l.appendLocked(e.typ, bodies[i], true)
	}
	l.mu.Unlock()
	pending := l.pending()
	c.Events = append(c.Events, pending...)
	var last int64
	if len(pending) > 0 {
		last = pending[len(pending)-1].Seq
	}
	backoff := 10 * time.Millisecond
	for {
		err := r.st.Apply(ctx, c)
		if err == nil {
			if last > 0 {
				l.markPersisted(last)
			}
			return first, nil
		}
		if errdefs.IsConflict(err) || errdefs.IsValidation(err) || errdefs.IsNotFound(err) || ctx.Err() != nil {
			r.dropHeld(l, len(evs))
			return 0, err
		}
		r.log.Warn("store write failed; retrying", "run_id", l.runID, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			r.dropHeld(l, len(evs))
			return 0, err
		case <-time.After(backoff):
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}

// dropHeld removes the n held events a failed commit appended (they are the
// tail of the held range and were never visible).
func (r *Runtime) dropHeld(l *runLog, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n == 0 || l.holdFrom == 0 {
		return
	}
	cut := int(l.holdFrom - l.base - 1)
	if cut < 0 || cut > len(l.events) {
		return
	}
	l.events = l.events[:cut]
	l.holdFrom = 0
	l.visible = l.last()
	l.dirty = true
}

func itoa(n int) string { return strconv.Itoa(n) }
