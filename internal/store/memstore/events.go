package memstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// Event page limits (ReadEvents).
const (
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// knownTypes are the event types the runtime writes (runtime.Event*; this
// package must not import runtime). A log stores them as an index and
// ReadEvents returns these strings, so that neither storing nor reading
// an event allocates its type name.
var knownTypes = [...]string{
	"run.start", "status", "delta", "step.start", "step.complete",
	"step.error", "input", "artifact", "gap", "run.end",
}

// knownType returns 1 + the index of name in knownTypes, or 0. It is a
// switch, which the compiler turns into a search by length and then by
// value, for a scan of knownTypes compares name with every type before
// the one it is (TestKnownType keeps the two in step).
func knownType(name string) uint8 {
	switch name {
	case "run.start":
		return 1
	case "status":
		return 2
	case "delta":
		return 3
	case "step.start":
		return 4
	case "step.complete":
		return 5
	case "step.error":
		return 6
	case "input":
		return 7
	case "artifact":
		return 8
	case "gap":
		return 9
	case "run.end":
		return 10
	}
	return 0
}

// eventLog is one run's events in a form the garbage collector need not
// trace: every event is a stretch of arena — its type name (unless it is
// one of knownTypes), as putString writes it, followed by its Data — and a
// pointer-free entry in index. A log is then two objects the collector
// does not scan, however many events it holds, and the run id is kept
// once. Pruning drops a prefix, so index[i] is the event with seq
// pruned+1+i and a read after a seq indexes the slice directly.
type eventLog struct {
	runID  string
	arena  []byte
	index  []eventEntry
	pruned int64
}

// eventEntry locates one event in its log's arena. Data ends where the
// next event starts, or at the end of the arena.
type eventEntry struct {
	sec   int64 // Time, in Unix seconds and nanoseconds (UTC)
	start int   // offset of the event: the stored type name, then Data
	nsec  int32
	known uint8 // the type, as knownType returns it; 0: stored at start
}

// lastSeq is the highest seq ever appended.
func (l *eventLog) lastSeq() int64 { return l.pruned + int64(len(l.index)) }

// logRoom is a log's first arena and index, in one allocation that holds
// no pointers: a short run's events — its start, statuses, one step and
// end, 1.5 KB or so — fit in it. Its 2304 bytes are a size class of the
// allocator, so that none of it is rounding.
type logRoom struct {
	arena [1920]byte
	index [16]eventEntry
}

// append copies evs, which continue l and belong to its run, into l; an
// event without a time gets now. The arena grows at most once per call,
// to hold all of evs and as much again as it held: growing event by event
// would copy it several times in one call, and the doubling keeps the
// copies of a long log to one per byte on average.
func (l *eventLog) append(evs []run.Event, now time.Time) {
	size := 0
	for _, e := range evs {
		size += storedSize(e)
	}
	if l.index == nil { // a new log, or one pruned through its last event
		room := new(logRoom)
		l.arena, l.index = room.arena[:0], room.index[:0]
	}
	if cap(l.arena)-len(l.arena) < size {
		l.arena = slices.Grow(l.arena, len(l.arena)+size)
	}
	for _, e := range evs {
		at := e.Time
		if at.IsZero() {
			at = now
		}
		// The seconds and nanoseconds of orNow(e.Time, now), without
		// building that time: neither the zone nor dropping the
		// nanoseconds below a microsecond changes the seconds.
		ns := at.Nanosecond()
		x := eventEntry{sec: at.Unix(), nsec: int32(ns - ns%int(time.Microsecond)), start: len(l.arena), known: knownType(e.Type)}
		if x.known == 0 {
			l.arena = putString(l.arena, e.Type)
		}
		l.arena = append(l.arena, e.Data...)
		l.index = append(l.index, x)
	}
}

// storedSize is how many bytes of arena e takes.
func storedSize(e run.Event) int {
	if knownType(e.Type) > 0 {
		return len(e.Data)
	}
	return uvarintLen(uint64(len(e.Type))) + len(e.Type) + len(e.Data)
}

// uvarintLen is how many bytes putUint takes to write v.
func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// event returns the type and Data of index[i]; Data is the arena's.
func (l *eventLog) event(i int) (typ string, data []byte) {
	x := l.index[i]
	end := len(l.arena)
	if i+1 < len(l.index) {
		end = l.index[i+1].start
	}
	if x.known > 0 {
		return knownTypes[x.known-1], l.arena[x.start:end]
	}
	n, w := binary.Uvarint(l.arena[x.start:])
	from := x.start + w + int(n)
	return string(l.arena[x.start+w : from]), l.arena[from:end]
}

// ReadEvents returns up to limit events of run with seq > after.
func (s *Store) ReadEvents(ctx context.Context, runID string, after int64, limit int) (run.EventPage, error) {
	if err := live(ctx); err != nil {
		return run.EventPage{}, err
	}
	switch {
	case after < 0 || limit < 0:
		return run.EventPage{}, errdefs.Validationf("read events of run %q: after (%d) and limit (%d) must not be negative", runID, after, limit)
	case limit == 0:
		limit = defaultEventLimit
	case limit > maxEventLimit:
		limit = maxEventLimit
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil || t.runs[runID] == nil {
		return run.EventPage{}, nil
	}
	l := &t.runs[runID].log
	page := run.EventPage{LastSeq: l.lastSeq(), PrunedThrough: l.pruned}
	from := int(max(after, l.pruned) - l.pruned) // index of seq max(after, pruned)+1
	if from < len(l.index) {
		page.Events = l.read(from, min(from+limit, len(l.index)))
	}
	return page, nil
}

// read copies out the events index[from:to], with all their Data in one
// buffer; each Data is capped so that appending to one cannot overwrite
// the next.
func (l *eventLog) read(from, to int) []run.Event {
	end := len(l.arena)
	if to < len(l.index) {
		end = l.index[to].start
	}
	buf := make([]byte, 0, end-l.index[from].start)
	out := make([]run.Event, to-from)
	for i := range out {
		x := l.index[from+i]
		typ, data := l.event(from + i)
		start := len(buf)
		buf = append(buf, data...)
		out[i] = run.Event{
			RunID: l.runID,
			Seq:   l.pruned + 1 + int64(from+i),
			Type:  typ,
			Time:  time.Unix(x.sec, int64(x.nsec)).UTC(),
			Data:  json.RawMessage(buf[start:len(buf):len(buf)]),
		}
	}
	return out
}

// PruneEvents deletes the events of run with seq <= through (at most the
// last seq); PrunedThrough never moves back.
func (s *Store) PruneEvents(ctx context.Context, runID string, through int64) error {
	if err := live(ctx); err != nil {
		return err
	}
	if through < 0 {
		return errdefs.Validationf("prune events of run %q: negative seq %d", runID, through)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.readTenant(ctx); t != nil && t.runs[runID] != nil {
		t.runs[runID].log.prune(through)
	}
	return nil
}

// prune drops the events with seq <= through.
func (l *eventLog) prune(through int64) {
	through = min(through, l.lastSeq())
	if through <= l.pruned {
		return
	}
	keep := l.index[through-l.pruned:]
	l.pruned = through
	if len(keep) == 0 { // the next append starts a new arena and index
		l.arena, l.index = nil, nil
		return
	}
	// Copy the rest so the pruned events' memory is released.
	base := keep[0].start
	l.arena = slices.Clone(l.arena[base:])
	l.index = make([]eventEntry, len(keep))
	for i, x := range keep {
		x.start -= base
		l.index[i] = x
	}
}
