package runlog

import "context"

// Settle makes the events of run runID that readers on this replica may
// have been shown durable in the store, so that a read of the store that
// follows (ReadEvents: a cursor for "live from here", a snapshot of the
// run's artifacts) reflects at least every event a Stream has delivered.
// Only a volatile log shows events before the store has them (see Log);
// for any other, and for a run whose log is not open here, it returns at
// once.
func (ls *Logs) Settle(ctx context.Context, runID string) error {
	if !ls.volatile {
		return nil
	}
	l := ls.ref(runID)
	if l == nil {
		return nil
	}
	defer ls.Release(l)
	l.mu.Lock()
	behind := l.shown > l.persisted
	l.mu.Unlock()
	if !behind {
		return nil
	}
	return l.Flush(ctx)
}
