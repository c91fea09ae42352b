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
// still see the first token immediately. Readers never block writers: they
// copy what they need under mu and wait on a channel that is closed when more
// becomes visible. A reader that falls behind simply reads from further back
// — from memory while the events are here, from the store once they were
// trimmed — so nobody is ever skipped and nobody ever slows the run
// (invariant 4).
//
// Lock order: runtime.mu before runLog.mu; flushMu before mu. flushMu
// serialises the store writes of one run (flusher vs. state commits).
type runLog struct {
	runID string

	flushMu sync.Mutex

	mu sync.Mutex
	// base is the seq before events[0]: events <= base live only in the
	// store.
	base   int64
	events []store.Event
	// persisted is the highest seq durable in the store, and so the highest
	// seq readers may see.
	persisted int64
	changed   chan struct{}
	// refs counts executors and readers; the runtime forgets an idle log.
	refs int
	// active is true while an attempt executes on this replica.
	active bool
	// dirty is set when events await persistence by the flusher.
	dirty bool
	// terminal is the seq of the run's final run.end once the task reached
	// a terminal state (0 before).
	terminal int64
}

func newRunLog(runID string, lastSeq int64) *runLog {
	// Room for a short run's events (a one-turn answer logs about ten):
	// the slice then grows by doubling only for longer runs.
	return &runLog{runID: runID, base: lastSeq, persisted: lastSeq, events: make([]store.Event, 0, 16)}
}

// last returns the highest seq assigned. Callers hold mu.
func (l *runLog) last() int64 { return l.base + int64(len(l.events)) }

// appendLocked assigns the next seq to an event of type typ with body and
// appends it; it becomes visible once persisted. Callers hold mu.
func (l *runLog) appendLocked(typ string, body []byte) store.Event {
	seq := l.last() + 1
	ev := frame(l.runID, seq, typ, time.Now(), body)
	l.events = append(l.events, ev)
	l.dirty = true
	return ev
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
	if through > l.persisted {
		l.persisted = through
		l.wakeLocked()
	}
	l.mu.Unlock()
	l.trim(memoryTail)
}

// dropUnpersisted forgets the events a failed write could not make durable.
// Nobody saw them: events are visible only once durable.
func (l *runLog) dropUnpersisted() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if keep := int(l.persisted - l.base); keep >= 0 && keep < len(l.events) {
		l.events = l.events[:keep]
	}
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
	if keep := int(l.persisted - l.base); keep >= 0 && keep < len(l.events) {
		l.events = l.events[:keep] // unpersisted leftovers of a lost attempt
	}
	if storeLast > l.persisted {
		l.events, l.base, l.persisted = make([]store.Event, 0, 16), storeLast, storeLast
		l.wakeLocked()
	}
	l.active, l.terminal = true, 0
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
		return readResult{fromStore: true, storeThrough: l.base, visible: l.persisted, active: l.active, terminal: l.terminal}
	}
	n := l.persisted - after
	if n <= 0 {
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		return readResult{wait: l.changed, visible: l.persisted, active: l.active, terminal: l.terminal}
	}
	if n > int64(max) {
		n = int64(max)
	}
	// Readers share the log's memory: persisted events are never written
	// again (trim moves the tail to a new array), and the cap keeps a
	// reader's appends off the log.
	from := after - l.base
	return readResult{events: l.events[from : from+n : from+n], visible: l.persisted, active: l.active, terminal: l.terminal}
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
