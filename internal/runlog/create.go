package runlog

import (
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// A run's create need not be durable before the run starts when nobody can
// learn of the run before it answers: a blocking send or a stream in a
// context the server has just made — no other request can name the task,
// its context or its idempotency key, and nothing has been acknowledged
// (a stream answers once the create is durable). Such a create is
// deferred (Log.Defer): its entries are logged, hidden like every event
// not yet durable, and the change waits for the run's next write — its
// final commit, a checkpoint, a Flush, a stream's first live event — or
// for the flusher one window later at the latest, and rides in that
// write's transaction. A blocking send's run that ends within the window
// is then one store transaction instead of two, and a stream's first
// token is one commit away instead of two.
//
// Until it is written the run does not exist for anyone but its log's
// writer and readers of this log: no lease, no task to read. Should this
// process die meanwhile, the run is lost as a request that was never
// answered is; its client retries.

// Deferred is a run's create held for the run's next write.
type Deferred struct {
	// Change is the create: the task, its key, its messages and the
	// lease claim (store.Change.Lease).
	Change store.Change
	// Merge folds Change into next, the write that carries it. It is
	// called with the log's writes held, once per try.
	Merge func(create, next store.Change) store.Change
	// Landed is told the change that carried the create once it is
	// durable (the granted lease is in its Lease). It is called with the
	// log's writes held and must not write to the log.
	Landed func(written store.Change)
	// Quiet says nobody waits for the run's first live event (a blocking
	// send): it coalesces within the window like the events after it,
	// so a run that ends within the window is written once, at its end.
	// Otherwise (a stream) the first live event is written at once.
	Quiet bool
}

// Defer logs entries as a run's create and holds d.Change for the run's
// next write (see Deferred). l must be new (Logs.New) and not volatile.
// It returns the seq of the first entry.
func (l *Log) Defer(d Deferred, entries ...Entry) (int64, error) {
	bodies, err := l.encode(entries)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	l.mu.Lock()
	if l.volatile || l.last() != 0 {
		l.mu.Unlock()
		return 0, errdefs.Internalf("run %s: only a new run's log on a durable store defers its create", l.runID)
	}
	first := l.last() + 1
	for i, e := range entries {
		l.appendLocked(e.Type, bodies[i], now)
	}
	l.create, l.createAt = &d, l.last()
	l.sentFirst = l.sentFirst || d.Quiet
	l.mu.Unlock()
	l.logs.flusher.deferCreate(l)
	return first, nil
}

// withCreate folds the deferred create, if any, into c, the write about
// to start. Callers hold flushMu.
func (l *Log) withCreate(c store.Change) store.Change {
	if l.create == nil {
		return c
	}
	return l.create.Merge(l.create.Change, c)
}

// landed records that write c, which carried the deferred create (if the
// log holds one: every write of such a log carries it), succeeded.
// Callers hold flushMu.
func (l *Log) landed(c store.Change) {
	d := l.create
	if d == nil {
		return
	}
	l.mu.Lock()
	l.create, l.createAt = nil, 0
	l.mu.Unlock()
	l.logs.flusher.created(l)
	d.Landed(c)
}

// creating reports whether l holds a deferred create: its writes are its
// own, never part of the flusher's shared batch. Callers hold flushMu.
func (l *Log) creating() bool { return l.create != nil }

// keepCreateLocked is how many events of the log (from base) a failed
// write must keep: a deferred create's entries stay for the write that
// will carry it. Callers hold mu.
func (l *Log) keepCreateLocked(keep int) int {
	if l.create == nil {
		return keep
	}
	return max(keep, int(l.createAt-l.base))
}

// markDeferred queues every log that holds a deferred create for the
// next flush: the flusher's last, when the Logs stop.
func (f *flusher) markDeferred() {
	f.mu.Lock()
	for l := range f.deferred {
		f.dirty[l] = struct{}{}
	}
	f.mu.Unlock()
}

// deferCreate has l written one window from now unless a write of the run
// carries its create before: the bound on how long a run may stay
// unknown to everyone else.
func (f *flusher) deferCreate(l *Log) {
	f.mu.Lock()
	f.deferred[l] = struct{}{}
	f.mu.Unlock()
	time.AfterFunc(f.window, func() {
		f.mu.Lock()
		_, waiting := f.deferred[l]
		f.mu.Unlock()
		if waiting {
			f.mark(l, false)
		}
	})
}

// created forgets l's deferred create: written, or given up with its run.
func (f *flusher) created(l *Log) {
	f.mu.Lock()
	delete(f.deferred, l)
	f.mu.Unlock()
}
