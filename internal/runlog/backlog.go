package runlog

import "context"

// Backlog is how many of the run's events are logged here but not durable
// yet: while the store is unreachable they wait in memory, and the run's
// executor bounds them (WaitBacklog) so that an outage costs memory only
// up to a cap.
func (l *Log) Backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int(l.last() - l.persisted)
}

// WaitBacklog waits until at most max of the run's events wait to be
// durable, or ctx ends (its error then). A volatile log never waits: its
// store is this process's memory.
func (l *Log) WaitBacklog(ctx context.Context, max int) error {
	for {
		l.mu.Lock()
		if l.volatile || int(l.last()-l.persisted) <= max {
			l.mu.Unlock()
			return nil
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed // closed when more becomes durable (persistLocked)
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}
