package runlog

import (
	"sync"
	"time"

	"agentd/internal/engine"
	"agentd/internal/run"
	"agentd/internal/store"
)

// Log is the in-memory head of one run's event log on this replica and the
// meeting point of its writers and readers.
//
// Writers append under mu: the seq is assigned there, so seqs are dense and
// increasing. An event becomes visible to readers only once it is durable:
// then no reader — on this replica or another, before or after a crash — can
// ever have seen an event the store does not hold (invariants 3 and 6). The
// flusher makes live events durable in group commits; a state commit (Commit)
// carries the pending live events with it.
//
// A volatile log (its store is store.Volatile: the data lives in this
// process's memory and this process is its only writer) is as durable as
// the store, so it
// shows live events as soon as they are appended. Events a state commit
// appends are shown only once the commit succeeded, as always: a state
// change that failed must not have been seen.
//
// Readers never block writers: they copy what they need under mu and wait
// on a channel that is closed when more becomes visible. A reader that falls
// behind reads from further back — from memory while the events are here,
// from the store once they were trimmed — so nobody is ever skipped and
// nobody ever slows the run (invariant 4).
type Log struct {
	logs  *Logs
	runID string
	// head is how each of the run's events starts (appendFrameHead).
	head []byte

	// flushMu serialises the store writes of the run: the flusher's and
	// Commit's. It is taken before mu.
	flushMu sync.Mutex

	// mu guards every field below.
	mu sync.Mutex
	// base is the seq before events[0]: events <= base live only in the
	// store.
	base   int64
	events []run.Event
	// room is where the next events' data is written: one allocation
	// serves many events. Bytes written there are never written again (an
	// event's Data is capped at its end), so a reader may keep an event's
	// data for as long as it likes.
	room []byte
	// persisted is the highest seq durable in the store.
	persisted int64
	// shown is the highest seq readers may see: persisted, or beyond it in
	// a volatile log.
	shown   int64
	changed chan struct{}
	// refs counts executors and readers; Logs forgets an idle log.
	refs     int
	volatile bool
	// committing is set while a state commit's events are appended but not
	// yet durable: live events appended meanwhile wait to be shown.
	committing bool
	// active is true while an attempt executes on this replica.
	active bool
	// tenant is the store scope the flusher writes the events in
	// (SetTenant).
	tenant string
	// dirty is set when events await persistence by the flusher.
	dirty bool
	// sentFirst is set once the attempt executing here appended its first
	// delta (until then the flusher writes live events at once, see
	// Append).
	sentFirst bool
	// terminal is the seq of the run's final run.end once the task reached
	// a terminal state (0 before).
	terminal int64
	// staged is the checkpoint covering the live events through seq
	// stagedAt (AppendCheckpointed), not yet taken by a write; flight is
	// the one the write in progress carries (through flightAt), kept
	// until a write makes its events durable (checkpoint.go).
	staged, flight     *engine.Checkpoint
	stagedAt, flightAt int64
	// create is the run's deferred create, not yet written (create.go).
	create *Create
	// fence is the lease of the attempt that last executed here (RunID
	// empty: none): every write of the log is fenced by it
	// (store.Change.Fences), so a replica that lost the run cannot add to
	// its log. activate clears it for the next attempt.
	fence store.Lease
}

// roomSize is the size of the blocks event data is written into: an echo
// run's nine events take one or two.
const roomSize = 2 << 10

// firstEvents is the room a log's first append makes for events: a short
// run's fit without the slice growing four times on the way.
const firstEvents = 16

func newLog(ls *Logs, runID string, lastSeq int64) *Log {
	return &Log{logs: ls, runID: runID, head: appendFrameHead(make([]byte, 0, len(`{"run_id":"","seq":`)+len(runID)+8), runID),
		base: lastSeq, persisted: lastSeq, shown: lastSeq, volatile: ls.volatile}
}

// RunID is the run whose log l is.
func (l *Log) RunID() string { return l.runID }

// last returns the highest seq assigned. Callers hold mu.
func (l *Log) last() int64 { return l.base + int64(len(l.events)) }

// appendLocked assigns the next seq to an event of type typ with body,
// logged at time at, and appends it; it becomes visible once persisted.
// Callers hold mu.
func (l *Log) appendLocked(typ string, body Body, at time.Time) {
	seq := l.last() + 1
	if n := frameSize(l.runID, typ, body); cap(l.room)-len(l.room) < n {
		l.room = make([]byte, 0, max(n, roomSize))
	}
	start := len(l.room)
	l.room = frameAfter(l.room, l.head, seq, typ, at, body)
	data := l.room[start:len(l.room):len(l.room)]
	if l.events == nil {
		l.events = make([]run.Event, 0, firstEvents)
	}
	l.events = append(l.events, run.Event{RunID: l.runID, Seq: seq, Type: typ, Time: at, Data: data})
	l.dirty = true
}

// Append appends a live event (delta, step, artifact): the flusher makes it
// durable in its next batch, or the run's next Commit does. A volatile log
// shows it at once.
//
// Live events up to the attempt's first delta are urgent: readers are
// waiting for the run's first token, so the flusher's first-delta writer
// writes them at once, beside the windowed batch in flight (if any) rather
// than behind it. Later events coalesce within the window.
func (l *Log) Append(typ string, body Body) { l.appendLive(typ, body, nil) }

// appendLive appends a live event and stages cp (if any) as covering it.
func (l *Log) appendLive(typ string, body Body, cp *engine.Checkpoint) {
	l.mu.Lock()
	wasClean := !l.dirty
	urgent := !l.volatile && !l.sentFirst
	l.sentFirst = l.sentFirst || typ == EventDelta
	l.appendLocked(typ, body, time.Now())
	if cp != nil {
		l.staged, l.stagedAt = cp, l.last()
	}
	if l.volatile && !l.committing {
		l.shown = l.last()
		l.wakeLocked()
	}
	l.mu.Unlock()
	if wasClean || urgent {
		l.logs.flusher.mark(l, urgent)
	}
}

// pending returns the events not yet durable. Callers hold flushMu, and
// the slice shares the log's memory: it stays valid while they hold it,
// since only flushMu holders shorten the log (dropLocked) and later appends
// land beyond the slice's capped end.
func (l *Log) pending() []run.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := max(l.persisted-l.base, 0)
	l.dirty = false
	l.takeStagedLocked()
	if int(from) >= len(l.events) {
		return nil
	}
	return l.events[from:len(l.events):len(l.events)]
}

// MemoryTail is how many persisted events a log keeps in memory for readers
// that are just behind; older ones are read from the store.
const MemoryTail = 2048

// markPersisted records that events through seq are durable, shows them to
// readers and trims what memory no longer needs.
func (l *Log) markPersisted(through int64) {
	l.mu.Lock()
	l.persistLocked(through)
	l.mu.Unlock()
	l.trim(MemoryTail)
}

// persistLocked records that events through seq are durable and shows what
// readers may now see. Callers hold mu.
func (l *Log) persistLocked(through int64) {
	l.persisted = max(l.persisted, through)
	if l.flight != nil && l.flightAt <= l.persisted {
		l.flight = nil // written with its events
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

// dropLocked forgets the events a failed write could not make durable and
// nobody saw: events are visible only once durable, or, in a volatile log,
// once appended live. Shown events that are not durable yet stay for the
// flusher; it reports whether there are any. Callers hold mu.
func (l *Log) dropLocked() (showPending bool) {
	if keep := l.keepCreateLocked(int(max(l.persisted, l.shown) - l.base)); keep >= 0 && keep < len(l.events) {
		l.events = l.events[:keep]
	}
	l.unstageLocked()
	if l.shown > l.persisted {
		l.dirty = true
		return true
	}
	return false
}

// SetFence makes l's writes depend on lease f (zero: on none).
func (l *Log) SetFence(f store.Lease) {
	l.mu.Lock()
	l.fence = f
	l.mu.Unlock()
}

// fences returns the leases l's next write depends on, appended to to.
func (l *Log) fences(to []store.Lease) []store.Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fence.RunID == "" {
		return to
	}
	return append(to, l.fence)
}

// markDirty flags the log for the flusher again after a failed write.
func (l *Log) markDirty() {
	l.mu.Lock()
	l.dirty = true
	l.mu.Unlock()
}

// activate marks the log as the one an attempt executing here appends to.
// A dormant log may lag the store (another replica wrote since it was
// made): it is moved to the store's end first, so new seqs continue the
// durable log.
func (l *Log) activate(storeLast int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if keep := int(max(l.persisted, l.shown) - l.base); keep >= 0 && keep < len(l.events) {
		l.events = l.events[:keep] // unshown leftovers of a lost attempt
	}
	switch {
	case storeLast > l.last():
		l.events, l.base, l.persisted, l.shown = nil, storeLast, storeLast, storeLast
		l.wakeLocked()
	case storeLast > l.persisted:
		l.persisted = storeLast // shown events of ours, written meanwhile
	}
	l.active, l.terminal, l.sentFirst = true, 0, false
	// Checkpoints a lost attempt staged are not this one's.
	l.staged, l.flight = nil, nil
	l.fence = store.Lease{} // a new attempt: it claims its own lease
}

// Deactivate records that no attempt executes here any more: readers look
// at the store for what another replica may write.
func (l *Log) Deactivate() {
	l.mu.Lock()
	l.active = false
	l.wakeLocked()
	l.mu.Unlock()
}

// End records that the run reached a terminal state with the last event
// logged: readers that have read it are done.
func (l *Log) End() {
	l.mu.Lock()
	l.terminal = l.last()
	l.wakeLocked()
	l.mu.Unlock()
}

// wakeLocked wakes every waiting reader. Callers hold mu.
func (l *Log) wakeLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// readResult is what a reader learns from one look at the log.
type readResult struct {
	events []run.Event
	// fromStore asks the reader to read (after, storeThrough] from the store.
	fromStore    bool
	storeThrough int64
	// wait is closed when the log changes; valid when events is empty.
	wait <-chan struct{}
	// active says an attempt executes on this replica; terminal is the
	// final run.end seq (0 while the run may go on).
	active   bool
	terminal int64
}

// read returns up to n visible events after seq `after`.
func (l *Log) read(after int64, n int) readResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := readResult{active: l.active, terminal: l.terminal}
	if after < l.base {
		res.fromStore, res.storeThrough = true, l.base
		return res
	}
	if l.shown <= after {
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		res.wait = l.changed
		return res
	}
	// Readers share the log's memory: persisted events are never written
	// again (trim moves the tail to a new array), and the cap keeps a
	// reader's appends off the log.
	from := after - l.base
	to := from + min(l.shown-after, int64(n))
	res.events = l.events[from:to:to]
	return res
}

// trim forgets persisted events that no reader needs from memory, keeping
// the newest keep events for readers that are just behind. It moves what
// it keeps to a new array — readers and writers may still hold slices of
// the old one — and only once the droppable part is at least as large as
// what is kept, so that appends do not copy the tail over and over.
func (l *Log) trim(keep int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	drop := min(len(l.events)-keep, int(l.persisted-l.base))
	if drop <= 0 || drop < keep {
		return
	}
	rest := l.events[drop:]
	l.events = append(make([]run.Event, 0, 2*len(rest)+16), rest...)
	l.base += int64(drop)
}
