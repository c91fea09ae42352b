package runlog

import (
	"bytes"
	"context"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// Entry is an event that comes with a state change (run.start, status,
// input, run.end): Commit encodes Body with encoding/json, unless the entry
// was made by RunStart, Status or RunEnd, whose bodies the log writes.
type Entry struct {
	Type string
	Body any
	// members are the body of a RunStart, Status or RunEnd entry.
	members stateMembers
}

// Rebase is how a writer resolves a Conflict of its change: it rereads what
// it must and returns the change to try again, or an error to give up.
type Rebase func(conflict error) (store.Change, error)

// Commit writes one logical change of the run together with every pending
// live event of the run and the entries, atomically; readers see the events
// once it succeeded (invariant 6). Transient store failures are retried
// until ctx ends or the Logs stop; a Conflict is returned at once unless
// rebase (may be nil) resolves it. The entries are logged once, whatever
// the number of tries.
//
// It returns the seq of the first entry.
func (l *Log) Commit(ctx context.Context, c store.Change, rebase Rebase, entries ...Entry) (int64, error) {
	// Encode first, so that nothing can fail once the log holds the events.
	bodies, err := l.encode(entries)
	if err != nil {
		return 0, err
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	first, pending := l.beginCommit(entries, bodies)
	var last int64
	if len(pending) > 0 {
		last = pending[len(pending)-1].Seq
	}
	ok := false
	defer func() { l.endCommit(ok, last) }()
	c = l.carry(c, pending)
	backoff := 10 * time.Millisecond
	uncertain := false // an earlier try's commit outcome is unknown
	for {
		err := l.logs.st.Apply(ctx, c)
		if err != nil && uncertain && errdefs.IsConflict(err) && len(pending) > 0 && l.logs.storedPrefix(ctx, l.runID, pending) == len(pending) {
			err = nil // the earlier try did commit (the change is atomic)
		}
		if err == nil {
			ok = true
			l.landed(c)
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
			c = l.carry(next, pending)
			continue
		}
		if errdefs.IsConflict(err) || errdefs.IsValidation(err) || errdefs.IsNotFound(err) || ctx.Err() != nil {
			return 0, err
		}
		l.logs.log.WarnContext(ctx, "store write failed; retrying", "run_id", l.runID, "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return 0, err
		case <-l.logs.stop: // stopped hard
			return 0, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// encode encodes the bodies of entries; those of state entries point at
// their members, which are framed while entries is still in use.
func (l *Log) encode(entries []Entry) ([]Body, error) {
	bodies := make([]Body, len(entries))
	for i, e := range entries {
		if e.members.typ != "" {
			bodies[i] = Body{members: &entries[i].members}
			continue
		}
		b, err := Encode(e.Body)
		if err != nil {
			return nil, errdefs.Internalf("encode %s event of run %s: %w", e.Type, l.runID, err)
		}
		bodies[i] = b
	}
	return bodies, nil
}

// carry adds the log's pending events and fences to change c.
func (l *Log) carry(c store.Change, pending []run.Event) store.Change {
	if len(c.Events) == 0 {
		c.Events = pending // the store only reads a change's events
	} else {
		c.Events = append(c.Events[:len(c.Events):len(c.Events)], pending...)
	}
	c.EventsValid = true // framed here, from encoded bodies
	c.Fences = l.fences(c.Fences)
	c.Checkpoints = l.checkpoints(c.Checkpoints)
	return l.withCreate(c)
}

// beginCommit appends a state commit's entries, which stay hidden until
// endCommit(true), and returns the seq of the first and the events the
// commit must write. They are logged at the same time.
func (l *Log) beginCommit(entries []Entry, bodies []Body) (int64, []run.Event) {
	now := time.Now()
	l.mu.Lock()
	first := l.last() + 1
	for i, e := range entries {
		l.appendLocked(e.Type, bodies[i], now)
	}
	l.committing = true
	l.mu.Unlock()
	return first, l.pending()
}

// endCommit closes a state commit: on success its events (and every live
// event before them) are durable through seq last, which shows them; on
// failure nothing it appended is shown, and the log forgets whatever it has
// not shown — shown live events stay for the flusher.
func (l *Log) endCommit(ok bool, last int64) {
	l.mu.Lock()
	l.committing = false
	if !ok {
		showPending := l.dropLocked()
		creating := l.creating() // its entries stay for the next write
		l.dirty = l.dirty || creating
		l.mu.Unlock()
		if showPending || creating {
			l.logs.flusher.mark(l, false)
		}
		return
	}
	l.persistLocked(last) // also shows what is durable already
	l.mu.Unlock()
	l.trim(MemoryTail)
}

// Flush makes l's pending events durable now, waiting for a state commit
// that holds the log to finish first.
func (l *Log) Flush(ctx context.Context) error {
	return l.logs.flusher.flushLog(ctx, l, nil)
}

// FlushCheckpoint makes l's pending events durable together with cp, in
// one store transaction: a checkpoint is never durable before the events
// published before it, and an engine that checkpoints costs the store one
// write for both rather than two. The caller stamps cp.
func (l *Log) FlushCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	return l.logs.flusher.flushLog(ctx, l, &cp)
}

// storedPrefix counts how many of evs (consecutive events of one run) the
// store already holds byte for byte: after a write whose commit outcome was
// unknown, a retry that conflicts may only mean the earlier try went
// through. A stored event that differs means another writer took the log.
func (ls *Logs) storedPrefix(ctx context.Context, runID string, evs []run.Event) int {
	if len(evs) == 0 {
		return 0
	}
	page, err := ls.st.ReadEvents(ctx, runID, evs[0].Seq-1, len(evs))
	if err != nil {
		return 0
	}
	n := 0
	for n < len(evs) && n < len(page.Events) && page.Events[n].Seq == evs[n].Seq && bytes.Equal(page.Events[n].Data, evs[n].Data) {
		n++
	}
	return n
}
