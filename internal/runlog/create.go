package runlog

import (
	"context"
	"slices"
	"sync/atomic"
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

// Create is a run's deferred create, from Log.Defer until a write of the
// run carries it to the store. It holds all there is to know of it: the
// change, the seq of its last entry, whether anyone waits for the run's
// first live event, how it rides with a write (into), and, once it
// landed, the lease that write claimed. Its writer waits for it (Wait)
// and takes that lease (TakeLease); the log does the rest.
type Create struct {
	// change is the create: the task, its key, its messages and the
	// lease claim (store.Change.Lease).
	change store.Change
	// at is the seq of the create's last entry: a write that fails keeps
	// the entries through it for the write that will carry the create.
	at int64
	// done is closed once a write carried the create; granted, set before
	// it is closed, is the lease that write claimed (zero if its answer
	// was lost: a retry found it stored).
	done    chan struct{}
	granted store.Lease
	// taken says TakeLease handed granted over.
	taken atomic.Bool
}

// Defer logs entries as the create of a new run and holds change for the
// run's next write (see Create). quiet says nobody waits for the run's
// first live event (a blocking send): it then coalesces within the window
// like the events after it, so that a run that ends within the window is
// written once, at its end; otherwise (a stream) the first live event is
// written at once. l must be new (Logs.New) and not volatile.
func (l *Log) Defer(change store.Change, quiet bool, entries ...Entry) (*Create, error) {
	bodies, err := l.encode(entries)
	if err != nil {
		return nil, err
	}
	c := &Create{change: change, done: make(chan struct{})}
	now := time.Now()
	l.mu.Lock()
	if l.volatile || l.last() != 0 {
		l.mu.Unlock()
		return nil, errdefs.Internalf("run %s: only a new run's log on a durable store defers its create", l.runID)
	}
	for i, e := range entries {
		l.appendLocked(e.Type, bodies[i], now)
	}
	c.at = l.last()
	l.create = c
	l.sentFirst = l.sentFirst || quiet
	l.mu.Unlock()
	l.logs.flusher.deferCreate(l)
	return c, nil
}

// Wait waits until the create is stored. It fails only when ctx ends (a
// create the store refused because the run was lost is never stored).
// A nil Create was stored before anyone could wait for it.
func (c *Create) Wait(ctx context.Context) error {
	if c == nil {
		return nil
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TakeLease hands over, once, the lease that the write which carried the
// create claimed: the run's lease from then on, for its writer to renew
// and give up. It is zero before that write landed, and after the first
// call. The log's writes are fenced by it already (Log.SetFence).
func (c *Create) TakeLease() store.Lease {
	select {
	case <-c.done:
	default:
		return store.Lease{}
	}
	if c.taken.Swap(true) {
		return store.Lease{}
	}
	return c.granted
}

// into folds the create into next, the run's write about to carry it. A
// task update becomes the create of the updated task (at the update's
// version: the store stores it plus one, as the update would have); a run
// that stops executing with it — it ended or asks for input — needs no
// lease, and its create claims none. It is called once per try.
func (c *Create) into(next store.Change) store.Change {
	m := next
	m.Idempotency, m.TaskID, m.CreateTask, m.Lease = c.change.Idempotency, c.change.TaskID, c.change.CreateTask, c.change.Lease
	if u := next.UpdateTask; u != nil {
		m.CreateTask, m.UpdateTask = u, nil
		if u.State.Terminal() || u.State.Interrupted() {
			m.Lease = nil
		}
	}
	m.Messages = append(slices.Clip(c.change.Messages), next.Messages...)
	return m
}

// withCreate folds the deferred create, if any, into c, the write about
// to start. Callers hold flushMu.
func (l *Log) withCreate(c store.Change) store.Change {
	if l.create == nil {
		return c
	}
	return l.create.into(c)
}

// landed records that write c, which carried the deferred create (if the
// log holds one: every write of such a log carries it), succeeded: the
// lease it claimed fences the run's later writes, and the create is done.
// Callers hold flushMu.
func (l *Log) landed(written store.Change) {
	c := l.create
	if c == nil {
		return
	}
	l.mu.Lock()
	l.create = nil
	if written.Lease != nil && written.Lease.Granted.RunID != "" {
		c.granted = written.Lease.Granted
		l.fence = c.granted
	}
	l.mu.Unlock()
	l.logs.flusher.created(l)
	close(c.done)
}

// loseCreateLocked forgets the deferred create of a run that was lost: it
// is never written. It reports whether there was one. Callers hold mu.
func (l *Log) loseCreateLocked() bool {
	lost := l.create != nil
	l.create = nil
	return lost
}

// creating reports whether l holds a deferred create: its writes are its
// own, never part of the flusher's shared batch. Callers hold flushMu or
// mu.
func (l *Log) creating() bool { return l.create != nil }

// keepCreateLocked is how many events of the log (from base) a failed
// write must keep: a deferred create's entries stay for the write that
// will carry it. Callers hold mu.
func (l *Log) keepCreateLocked(keep int) int {
	if l.create == nil {
		return keep
	}
	return max(keep, int(l.create.at-l.base))
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
