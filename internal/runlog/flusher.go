package runlog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// flusher persists live events in group commits: when a log turns dirty it
// writes the pending events of every dirty run in one Apply (across runs,
// invariant 7) — at once after a quiet spell, so the first token is not
// delayed, and then at most once per window, so that a burst of deltas
// becomes one write per window rather than one per token. A run whose state
// commit is in progress is skipped this round; that commit carries its
// pending events.
type flusher struct {
	logs   *Logs
	st     store.Store
	window time.Duration
	log    *slog.Logger

	mu    sync.Mutex
	dirty map[*Log]struct{}
	kick  chan struct{}
	// urgent cuts the window short: someone waits for an event to become
	// durable (see Log.Append).
	urgent chan struct{}

	// batch is flush's memory, reused from one flush to the next (only the
	// flusher's goroutine flushes).
	batch batch
}

// batch is what one flush writes: the dirty logs, those it locked, and
// their pending events, last seqs and fences.
type batch struct {
	logs, locked []*Log
	events       []store.Event
	lasts        []int64
	fences       []store.Lease
	cps          []engine.Checkpoint // rare: only engines that stage one
}

func newFlusher(ls *Logs, window time.Duration) *flusher {
	return &flusher{logs: ls, st: ls.st, window: window, log: ls.log, dirty: map[*Log]struct{}{},
		kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1)}
}

// mark queues l for the next flush; urgent asks for that flush to start as
// soon as the one in flight (if any) has returned, window or not.
func (f *flusher) mark(l *Log, urgent bool) {
	f.mu.Lock()
	f.dirty[l] = struct{}{}
	f.mu.Unlock()
	if urgent {
		select {
		case f.urgent <- struct{}{}:
		default:
		}
	}
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// run flushes until ctx is done, then flushes once more.
func (f *flusher) run(ctx context.Context) {
	var last time.Time
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-ctx.Done():
			f.flush(context.WithoutCancel(ctx))
			return
		case <-f.kick:
		}
		if wait := f.window - time.Since(last); wait > 0 && !f.takeUrgent() {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				f.flush(context.WithoutCancel(ctx))
				return
			case <-timer.C:
			case <-f.urgent:
				timer.Stop()
			}
		}
		last = time.Now()
		f.takeUrgent() // this flush serves whoever asked so far
		f.flush(ctx)
	}
}

// takeUrgent reports (and consumes) a pending urgent request.
func (f *flusher) takeUrgent() bool {
	select {
	case <-f.urgent:
		return true
	default:
		return false
	}
}

// flushLog writes l's pending events now, waiting for a state commit that
// holds the log to finish first.
// With cp, the write also saves cp, in the same store transaction.
func (f *flusher) flushLog(ctx context.Context, l *Log, cp *engine.Checkpoint) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	p := l.pending()
	if len(p) == 0 && cp == nil {
		return nil
	}
	c := l.change(p)
	if cp != nil {
		// Newer than a staged one, and covering the same events.
		c.Checkpoints = []engine.Checkpoint{*cp}
	}
	if err := f.st.Apply(l.scoped(ctx), c); err != nil {
		l.markDirty()
		f.mark(l, false)
		return err
	}
	if len(p) > 0 {
		l.markPersisted(p[len(p)-1].Seq)
	}
	return nil
}

// maxBatchKept bounds the events a flush keeps room for until the next.
const maxBatchKept = 4096

// flush writes every dirty run's pending events.
func (f *flusher) flush(ctx context.Context) {
	b := &f.batch
	defer b.reset()
	if !f.gather(b) {
		return
	}
	locked, events, lasts, fences, cps := b.locked, b.events, b.lasts, b.fences, b.cps
	bctx, shared := batchScope(ctx, locked)
	if !shared {
		f.applyEach(ctx, locked) // runs of several tenants: a write each
		return
	}
	err := f.st.Apply(bctx, store.Change{Events: events, EventsValid: true, Fences: fences, Checkpoints: cps})
	if err != nil && len(locked) > 1 && errdefs.IsConflict(err) {
		// One run's log was taken over; write the others on their own.
		f.applyEach(ctx, locked)
		return
	}
	for i, l := range locked {
		if err == nil {
			l.markPersisted(lasts[i])
		} else {
			f.failed(ctx, l, l.pending(), err)
		}
		l.flushMu.Unlock()
	}
}

// gather takes the dirty runs into b and locks those that have pending
// events (a run whose flushMu a state commit holds is left to that commit,
// which carries its events), collecting the events, each run's last seq
// its fences and staged checkpoints. It reports whether any run is locked.
func (f *flusher) gather(b *batch) bool {
	f.mu.Lock()
	for l := range f.dirty {
		b.logs = append(b.logs, l)
	}
	clear(f.dirty)
	f.mu.Unlock()
	for _, l := range b.logs {
		if !l.flushMu.TryLock() {
			continue // a state commit holds it and will carry the events
		}
		p := l.pending()
		if len(p) == 0 {
			l.flushMu.Unlock()
			continue
		}
		b.locked = append(b.locked, l)
		b.events = append(b.events, p...)
		b.lasts = append(b.lasts, p[len(p)-1].Seq)
		b.fences = l.fences(b.fences)
		b.cps = l.checkpoints(b.cps)
	}
	return len(b.locked) > 0
}

// reset empties b for the next flush, keeping its memory (not what it
// points to, nor much of it).
func (b *batch) reset() {
	clear(b.logs)
	clear(b.locked)
	clear(b.events)
	clear(b.fences)
	clear(b.cps)
	b.logs, b.locked, b.events, b.lasts, b.fences, b.cps = b.logs[:0], b.locked[:0], b.events[:0], b.lasts[:0], b.fences[:0], b.cps[:0]
	if cap(b.events) > maxBatchKept {
		b.events = nil
	}
}

func (f *flusher) applyEach(ctx context.Context, logs []*Log) {
	for _, l := range logs {
		p := l.pending()
		if err := f.st.Apply(l.scoped(ctx), l.change(p)); err != nil {
			f.failed(ctx, l, p, err)
		} else {
			l.markPersisted(p[len(p)-1].Seq)
		}
		l.flushMu.Unlock()
	}
}

// failed keeps l's events pending; a conflict means another writer owns the
// log now and the run must stop here — unless the conflict only shows that
// an earlier write, whose commit outcome was unknown, did go through.
func (f *flusher) failed(ctx context.Context, l *Log, p []store.Event, err error) {
	ctx = l.scoped(ctx)
	if errdefs.IsConflict(err) {
		if n := f.logs.storedPrefix(ctx, l.runID, p); n > 0 {
			// An earlier write whose answer was lost did commit: keep what
			// is there and write the rest next time.
			l.markPersisted(p[n-1].Seq)
			if n < len(p) {
				l.markDirty()
				f.mark(l, false)
			}
			return
		}
	}
	if errdefs.IsConflict(err) {
		f.log.Warn("event log write refused; run lost", "run_id", l.runID, "err", err)
		l.mu.Lock()
		showPending := l.dropLocked()
		l.mu.Unlock()
		if showPending {
			// Only a volatile log shows events before they are durable, and
			// its store has no other writer: this is a bug.
			f.log.Error("events already shown to readers could not be stored", "run_id", l.runID, "err", err)
		}
		if f.logs.onLost != nil {
			f.logs.onLost(l.runID, err)
		}
		return
	}
	f.log.Warn("event log write failed; will retry", "run_id", l.runID, "err", err)
	l.markDirty()
	f.mark(l, false)
}
