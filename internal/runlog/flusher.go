package runlog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// flusher persists live events in group commits: when a log turns dirty it
// writes the pending events of every dirty run in one Apply (across runs,
// invariant 7) — at once after a quiet spell, so the first token is not
// delayed, and then at most once per window, so that a burst of deltas
// becomes one write per window rather than one per token. A run whose log
// another write holds (a state commit, or the other writer below) is
// skipped this round and tried again the next: that write carries what it
// took, the next round what was appended since.
//
// An attempt's first delta has a writer of its own (runFirst): someone
// waits for it, and behind the windowed batch in flight — every busy run's
// deltas of a window — it would wait for the batch to be written, and then
// for the next to carry it. The first-delta writer writes only the logs
// that wait for their first token, at once, beside the batch in flight.
type flusher struct {
	logs   *Logs
	st     store.Store
	window time.Duration
	log    *slog.Logger

	mu    sync.Mutex
	dirty map[*Log]struct{}
	kick  chan struct{}
	// first holds the logs whose first delta waits (see Log.Append), for
	// runFirst; kickFirst wakes it.
	first     map[*Log]struct{}
	kickFirst chan struct{}
	// last is when either writer last flushed (unix ns): a first delta's
	// write opens a window too, so that the deltas right behind it
	// coalesce.
	last atomic.Int64

	// deferred holds the logs whose create waits for a write (create.go).
	deferred map[*Log]struct{}

	// batch and firstBatch are the memory of run's and runFirst's
	// flushes, reused from one to the next.
	batch, firstBatch batch
}

// batch is what one flush writes: the dirty logs, those it locked, and
// their pending events, last seqs and fences.
type batch struct {
	logs, locked []*Log
	// own are locked logs written on their own: they carry a deferred
	// create, a change of its own.
	own    []*Log
	events []run.Event
	lasts  []int64
	fences []store.Lease
	cps    []engine.Checkpoint // rare: only engines that stage one
}

func newFlusher(ls *Logs, window time.Duration) *flusher {
	return &flusher{logs: ls, st: ls.st, window: window, log: ls.log,
		dirty: map[*Log]struct{}{}, kick: make(chan struct{}, 1),
		first: map[*Log]struct{}{}, kickFirst: make(chan struct{}, 1), deferred: map[*Log]struct{}{}}
}

// mark queues l for the next flush; first queues it for the first-delta
// writer instead, which writes it at once.
func (f *flusher) mark(l *Log, first bool) {
	set, kick := f.dirty, f.kick
	if first {
		set, kick = f.first, f.kickFirst
	}
	f.mu.Lock()
	set[l] = struct{}{}
	f.mu.Unlock()
	select {
	case kick <- struct{}{}:
	default:
	}
}

// run flushes until ctx is done, then flushes once more; runFirst writes
// first deltas meanwhile.
func (f *flusher) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { f.runFirst(ctx) })
	defer wg.Wait()
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-ctx.Done():
			f.markDeferred()
			f.flush(context.WithoutCancel(ctx), &f.batch, f.dirty)
			return
		case <-f.kick:
		}
		if wait := f.window - time.Since(time.Unix(0, f.last.Load())); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				f.markDeferred()
				f.flush(context.WithoutCancel(ctx), &f.batch, f.dirty)
				return
			case <-timer.C:
			}
		}
		f.last.Store(time.Now().UnixNano())
		f.flush(ctx, &f.batch, f.dirty)
	}
}

// runFirst writes the logs waiting for their first delta, as soon as they
// are marked, until ctx is done.
func (f *flusher) runFirst(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			f.flush(context.WithoutCancel(ctx), &f.firstBatch, f.first)
			return
		case <-f.kickFirst:
		}
		f.last.Store(time.Now().UnixNano())
		f.flush(ctx, &f.firstBatch, f.first)
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
	l.landed(c)
	if len(p) > 0 {
		l.markPersisted(p[len(p)-1].Seq)
	}
	return nil
}

// maxBatchKept bounds the events a flush keeps room for until the next.
const maxBatchKept = 4096

// flush writes the pending events of the runs in set (f.dirty or
// f.first), using b.
func (f *flusher) flush(ctx context.Context, b *batch, set map[*Log]struct{}) {
	defer b.reset()
	if !f.gather(b, set) {
		return
	}
	// The logs that carry a create are changes of their own: written
	// concurrently, beside the batch, so that the store may put them in
	// one transaction (pgstore's group commit) rather than one after the
	// other.
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, l := range b.own {
		wg.Go(func() { f.applyOne(ctx, l) })
	}
	if len(b.locked) == 0 {
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

// gather takes the runs in set into b and locks those that have pending
// events (a run whose flushMu another write holds is marked for the next
// round), collecting the events, each run's last seq, its fences and
// staged checkpoints. It reports whether any run is locked.
func (f *flusher) gather(b *batch, set map[*Log]struct{}) bool {
	f.mu.Lock()
	for l := range set {
		b.logs = append(b.logs, l)
	}
	clear(set)
	f.mu.Unlock()
	for _, l := range b.logs {
		if !l.flushMu.TryLock() {
			// A state commit or the other writer holds it. What it took is
			// written; what was appended after it took it waits for a
			// later round — the log is marked dirty already, so no append
			// would mark it again.
			f.mark(l, false)
			continue
		}
		p := l.pending()
		if len(p) == 0 {
			l.flushMu.Unlock()
			continue
		}
		if l.creating() {
			b.own = append(b.own, l)
			continue
		}
		b.locked = append(b.locked, l)
		b.events = append(b.events, p...)
		b.lasts = append(b.lasts, p[len(p)-1].Seq)
		b.fences = l.fences(b.fences)
		b.cps = l.checkpoints(b.cps)
	}
	return len(b.locked)+len(b.own) > 0
}

// reset empties b for the next flush, keeping its memory (not what it
// points to, nor much of it).
func (b *batch) reset() {
	clear(b.logs)
	clear(b.locked)
	clear(b.own)
	clear(b.events)
	clear(b.fences)
	clear(b.cps)
	b.logs, b.locked, b.own, b.events, b.lasts, b.fences, b.cps = b.logs[:0], b.locked[:0], b.own[:0], b.events[:0], b.lasts[:0], b.fences[:0], b.cps[:0]
	if cap(b.events) > maxBatchKept {
		b.events = nil
	}
}

// applyEach writes each of logs (locked) on its own, one after the other.
func (f *flusher) applyEach(ctx context.Context, logs []*Log) {
	for _, l := range logs {
		f.applyOne(ctx, l)
	}
}

// applyOne writes l's pending events (and what rides with them) on their
// own, and unlocks l.
func (f *flusher) applyOne(ctx context.Context, l *Log) {
	defer l.flushMu.Unlock()
	p := l.pending()
	c := l.change(p)
	if err := f.st.Apply(l.scoped(ctx), c); err != nil {
		f.failed(ctx, l, p, err)
		return
	}
	l.landed(c)
	l.markPersisted(p[len(p)-1].Seq)
}

// failed keeps l's events pending; a conflict means another writer owns the
// log now and the run must stop here — unless the conflict only shows that
// an earlier write, whose commit outcome was unknown, did go through.
func (f *flusher) failed(ctx context.Context, l *Log, p []run.Event, err error) {
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
		lostCreate := l.loseCreateLocked()
		showPending := l.dropLocked()
		l.mu.Unlock()
		if lostCreate {
			f.created(l)
		}
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
