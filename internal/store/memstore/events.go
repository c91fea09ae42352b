package memstore

import (
	"context"
	"encoding/json"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Event page limits (ReadEvents).
const (
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// eventLog is one run's events. Pruning drops a prefix, so events[i] has
// seq pruned+1+i and a read after a seq indexes the slice directly.
type eventLog struct {
	events []store.Event
	pruned int64
}

// lastSeq is the highest seq ever appended; a nil log has none.
func (l *eventLog) lastSeq() int64 {
	if l == nil {
		return 0
	}
	return l.pruned + int64(len(l.events))
}

// log returns the log of runID, creating it. Callers hold the write lock.
func (t *tenant) log(runID string) *eventLog {
	l := t.logs[runID]
	if l == nil {
		// Room for a short run's events, so that one does not regrow
		// its slice four times.
		l = &eventLog{events: make([]store.Event, 0, 16)}
		t.logs[runID] = l
	}
	return l
}

func (l *eventLog) append(e store.Event) { l.events = append(l.events, e) }

// ReadEvents returns up to limit events of run with seq > after.
func (s *Store) ReadEvents(ctx context.Context, runID string, after int64, limit int) (store.EventPage, error) {
	if err := live(ctx); err != nil {
		return store.EventPage{}, err
	}
	switch {
	case after < 0 || limit < 0:
		return store.EventPage{}, errdefs.Validationf("read events of run %q: after (%d) and limit (%d) must not be negative", runID, after, limit)
	case limit == 0:
		limit = defaultEventLimit
	case limit > maxEventLimit:
		limit = maxEventLimit
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil || t.logs[runID] == nil {
		return store.EventPage{}, nil
	}
	l := t.logs[runID]
	page := store.EventPage{LastSeq: l.lastSeq(), PrunedThrough: l.pruned}
	from := max(after, l.pruned) - l.pruned // index of seq max(after, pruned)+1
	if from < int64(len(l.events)) {
		page.Events = copyEvents(l.events[from:min(from+int64(limit), int64(len(l.events)))])
	}
	return page, nil
}

// copyEvents copies evs with all their Data in one buffer; each Data is
// capped so that appending to one cannot overwrite the next.
func copyEvents(evs []store.Event) []store.Event {
	size := 0
	for _, e := range evs {
		size += len(e.Data)
	}
	buf := make([]byte, 0, size)
	out := make([]store.Event, len(evs))
	for i, e := range evs {
		start := len(buf)
		buf = append(buf, e.Data...)
		e.Data = json.RawMessage(buf[start:len(buf):len(buf)])
		out[i] = e
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
	t := s.readTenant(ctx)
	if t == nil || t.logs[runID] == nil {
		return nil
	}
	l := t.logs[runID]
	through = min(through, l.lastSeq())
	if through <= l.pruned {
		return nil
	}
	// Copy the rest so the pruned events' memory is released.
	l.events = append([]store.Event(nil), l.events[through-l.pruned:]...)
	l.pruned = through
	return nil
}
