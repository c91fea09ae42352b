package runtime

import (
	"sync"
	"time"

	"agentd/internal/store"
)

// runLog is the in-memory head of one run's event log and the meeting point
// of its writers and readers on this replica.
//
// Writers append under mu: the seq is assigned there, so seqs are dense and
// increasing. An event becomes visible to readers only once it is durable:
// then no reader — on this replica or another, before or after a crash — can
// ever have seen an event the log does not hold (invariants 3 and 6). The
// flusher makes live events durable in group commits (the first event after
// a quiet spell at once, then at most one batch per window), so live readers
// still see the first token immediately.
//
// A volatile log (Options.VolatileStore: the store lives in this process's
// memory and this runtime is its only writer) is as durable as the store, so
// it shows live events as soon as they are appended and leaves their write
// to the flusher or the run's next state commit. Events a state commit
// appends are shown only once the commit succeeded, as always: a state
// change that failed must not have been seen.
//
// Readers never block writers: they copy what they need under mu and wait on a channel that is closed when more
// becomes visible. A reader that falls behind simply reads from further back
// — from memory while the events are here, from the store once they were
// trimmed — so nobody is ever skipped and nobody ever slows the run
// (invariant 4).
//
// Lock order: runtime.mu before runLog.mu; flushMu before mu. flushMu
// serialises the store writes of one run (flusher vs. state commits).
type runLog struct {
	runID string
	// head is how each of the run's events starts (appendFrameHead), in
	// headRoom for a run id of the runtime's.
	head     []byte
	headRoom [64]byte

	flushMu sync.Mutex

	mu sync.Mutex
	// base is the seq before events[0]: events <= base live only in the
	// store.
	base   int64
	events []store.Event
	// persisted is the highest seq durable in the store.
	persisted int64
	// shown is the highest seq readers may see: persisted, or beyond it in
	// a volatile log.
	shown   int64
	changed chan struct{}
	// refs counts executors and readers; the runtime forgets an idle log.
	refs int
	// volatile shows live events before they are durable (see above).
	volatile bool
	// committing is set while a state commit's events are appended but not
	// yet durable: live events appended meanwhile wait to be shown.
	committing bool
	// active is true while an attempt executes on this replica.
	active bool
	// dirty is set when events await persistence by the flusher.
	dirty bool
	// terminal is the seq of the run's final run.end once the task reached
	// a terminal state (0 before).
	terminal int64
	// fence is the lease of the attempt that last executed here (RunID
	// empty: none): every write of the log is fenced by it
	// (store.Change.Fences), so a replica that lost the run cannot add to
	// its log. activate clears it for the next attempt.
	fence store.Lease
	// chunk is room for event data: frames are cut from chunks, so that an
	// event is not an allocation of its own. Cut data is never written
	// again.
	chunk []byte
	// firstEvents is the array events starts out in: room for a short
	// run's events (a one-turn answer logs nine) in the log's own
	// allocation. Longer runs grow events by doubling, as any slice.
	firstEvents [10]store.Event
}

// Event data is cut from chunks of these sizes: the first holds a short
// run's events, later ones grow for long runs; an event larger than a
// quarter of the largest has memory of its own.
const (
	firstChunk = 2 << 10
	maxChunk   = 32 << 10
)

func newRunLog(runID string, lastSeq int64, volatile bool) *runLog {
	l := &runLog{runID: runID, base: lastSeq, persisted: lastSeq, shown: lastSeq, volatile: volatile}
	l.head = appendFrameHead(l.headRoom[:0], runID)
	l.events = l.firstEvents[:0]
	return l
}

// last returns the highest seq assigned. Callers hold mu.
func (l *runLog) last() int64 { return l.base + int64(len(l.events)) }

// appendLocked assigns the next seq to an event of type typ with body,
// logged at time at, and appends it; it becomes visible once persisted.
// Callers hold mu.
func (l *runLog) appendLocked(typ string, body *eventBody, at time.Time) store.Event {
	seq := l.last() + 1
	n := frameSize(l.runID, typ, body)
	room, inChunk := l.room(n)
	ev := frameAfter(room, l.head, l.runID, seq, typ, at, body)
	if n = len(ev.Data); inChunk && n <= cap(room) { // written into the chunk
		l.chunk = l.chunk[:len(l.chunk)+n]
		ev.Data = ev.Data[:n:n] // a reader's append must not reach the next event
	}
	l.events = append(l.events, ev)
	l.dirty = true
	return ev
}

// room returns empty room for n bytes of event data, and whether it is
// the chunk's. Callers hold mu.
func (l *runLog) room(n int) ([]byte, bool) {
	if n > maxChunk/4 {
		return make([]byte, 0, n), false
	}
	if cap(l.chunk)-len(l.chunk) < n {
		l.chunk = make([]byte, 0, min(max(2*cap(l.chunk), firstChunk), maxChunk))
	}
	return l.chunk[len(l.chunk):], true
}

// appendLive appends a live event (delta, step, artifact) and, in a
// volatile log, shows it at once. It reports whether the log was clean
// before, i.e. whether the flusher must be told.
func (l *runLog) appendLive(typ string, body *eventBody) (wasClean bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	wasClean = !l.dirty
	l.appendLocked(typ, body, time.Now())
	if l.volatile && !l.committing {
		l.shown = l.last()
		l.wakeLocked()
	}
	return wasClean
}

// pending returns the events not yet durable. Callers hold flushMu, and
// the slice shares the log's memory: it stays valid while they hold it,
// since only flushMu holders shorten the log (dropUnpersisted) and later
// appends land beyond the slice's capped end.
func (l *runLog) pending() []store.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := l.persisted - l.base
	if from < 0 {
		from = 0
	}
	l.dirty = false
	if int(from) >= len(l.events) {
		return nil
	}
	return l.events[from:len(l.events):len(l.events)]
}

// memoryTail is how many persisted events a log keeps in memory for readers
// that are just behind; older ones are read from the store.
const memoryTail = 2048

// markPersisted records that events through seq are durable, shows them to
// readers and trims what memory no longer needs.
func (l *runLog) markPersisted(through int64) {
	l.mu.Lock()
	l.persistLocked(through)
	l.mu.Unlock()
	l.trim(memoryTail)
}

// persistLocked records that events through seq are durable and shows what
// readers may now see. Callers hold mu.
func (l *runLog) persistLocked(through int64) {
	if through > l.persisted {
		l.persisted = through
	}
	show := l.persisted
	if l.volatile && !l.committing {
		show = l.last() // live events appended behind a commit
	}
	if show > l.shown {
		l.shown = show
		l.wakeLocked()
	}
}

// beginCommit appends a state commit's events, which stay hidden until
// endCommit(true), and returns the seq of the first. Their bodies are
// encoded (see commitRebasing); they are logged at the same time.
func (l *runLog) beginCommit(evs []stateEvent) int64 {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.last() + 1
	for i := range evs {
		e := &evs[i]
		body := eventBody{state: e.body}
		if e.encoded != nil {
			body = eventBody{object: e.encoded}
		}
		l.appendLocked(e.typ(), &body, now)
	}
	l.committing = true
	return first
}

// endCommit closes a state commit: on success its events (and every live
// event before them) are durable through seq last, which shows them; on
// failure nothing it appended is shown, and the log forgets whatever it
// has not shown (see dropUnpersisted), reporting whether shown events are
// still to be written.
func (l *runLog) endCommit(ok bool, last int64) (showPending bool) {
	l.mu.Lock()
	l.committing = false
	if !ok {
		defer l.mu.Unlock()
		return l.dropLocked()
	}
	l.persistLocked(last) // also shows what is durable already
	l.mu.Unlock()
	l.trim(memoryTail)
	return false
}

// dropUnpersisted forgets the events a failed write could not make durable
// and nobody saw: events are visible only once durable, or, in a volatile
// log, once appended live. Shown events that are not durable yet stay for
// the flusher; it reports whether there are any.
func (l *runLog) dropUnpersisted() (showPending bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropLocked()
}

// dropLocked is dropUnpersisted for callers that hold mu.
func (l *runLog) dropLocked() (showPending bool) {
	if keep := int(max(l.persisted, l.shown) - l.base); keep >= 0 && keep < len(l.events) {
		l.events = l.events[:keep]
	}
	if l.shown > l.persisted {
		l.dirty = true
		return true
	}
	return false
}

// setFence makes l's writes depend on lease f (zero: on none).
func (l *runLog) setFence(f store.Lease) {
	l.mu.Lock()
	l.fence = f
	l.mu.Unlock()
}

// fences returns the leases l's next write depends on, appended to to.
func (l *runLog) fences(to []store.Lease) []store.Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fence.RunID == "" {
		return to
	}
	return append(to, l.fence)
}

// markDirty flags the log for the flusher again after a failed write.
func (l *runLog) markDirty() {
	l.mu.Lock()
	l.dirty = true
	l.mu.Unlock()
}

// activate marks the log as the one an attempt executing here appends to.
// A dormant log may lag the store (another replica wrote since it was
// made): it is moved to the store's end first, so new seqs continue the
// durable log.
func (l *runLog) activate(storeLast int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if keep := int(max(l.persisted, l.shown) - l.base); keep >= 0 && keep < len(l.events) {
		l.events = l.events[:keep] // unshown leftovers of a lost attempt
	}
	switch {
	case storeLast > l.last():
		l.events, l.base, l.persisted, l.shown = make([]store.Event, 0, 16), storeLast, storeLast, storeLast
		l.wakeLocked()
	case storeLast > l.persisted:
		l.persisted = storeLast // shown events of ours, written meanwhile
	}
	l.active, l.terminal = true, 0
	l.fence = store.Lease{} // a new attempt: it claims its own lease
}

// wakeLocked wakes every waiting reader. Callers hold mu.
func (l *runLog) wakeLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// readResult is what a reader learns from one look at the log.
type readResult struct {
	events []store.Event
	// fromStore asks the reader to read (after, storeThrough] from the store.
	fromStore    bool
	storeThrough int64
	// wait is closed when the log changes; valid when events is empty.
	wait <-chan struct{}
	// visible is the highest seq visible on this replica.
	visible int64
	// active says an attempt executes on this replica; terminal is the
	// final run.end seq (0 while the run may go on).
	active   bool
	terminal int64
}

// read returns up to max visible events after seq `after`.
func (l *runLog) read(after int64, max int) readResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after < l.base {
		return readResult{fromStore: true, storeThrough: l.base, visible: l.shown, active: l.active, terminal: l.terminal}
	}
	n := l.shown - after
	if n <= 0 {
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		return readResult{wait: l.changed, visible: l.shown, active: l.active, terminal: l.terminal}
	}
	if n > int64(max) {
		n = int64(max)
	}
	// Readers share the log's memory: persisted events are never written
	// again (trim moves the tail to a new array), and the cap keeps a
	// reader's appends off the log.
	from := after - l.base
	return readResult{events: l.events[from : from+n : from+n], visible: l.shown, active: l.active, terminal: l.terminal}
}

// trim forgets persisted events that no reader needs from memory, keeping
// the newest keep events for readers that are just behind. It moves what
// it keeps to a new array — readers and writers may still hold slices of
// the old one — and only once the droppable part is at least as large as
// what is kept, so that appends do not copy the tail over and over.
func (l *runLog) trim(keep int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	drop := len(l.events) - keep
	if limit := int(l.persisted - l.base); drop > limit {
		drop = limit
	}
	if drop <= 0 || drop < keep {
		return
	}
	rest := l.events[drop:]
	l.events = append(make([]store.Event, 0, 2*len(rest)+16), rest...)
	l.base += int64(drop)
}
