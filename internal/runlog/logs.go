package runlog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Options configure the logs of one replica.
type Options struct {
	Store store.Store
	// Window is the least time between two writes of live events: a burst
	// of deltas within it becomes one write. The first event after a quiet
	// spell is written at once. Zero writes as fast as the store takes
	// them (group commit).
	Window time.Duration
	// OnLost is called for a run whose log the store refused because
	// another writer owns it now (the run must stop here).
	OnLost func(runID string, err error)
	// Stop ends the retries of Commit when the owner stops hard.
	Stop <-chan struct{}
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
}

// Logs holds the logs of the runs this replica executes or serves readers
// of, and the flusher that makes their live events durable.
type Logs struct {
	st       store.Store
	volatile bool
	onLost   func(runID string, err error)
	stop     <-chan struct{}
	log      *slog.Logger
	flusher  *flusher

	// mu guards open; it is taken before any Log's locks.
	mu   sync.Mutex
	open map[string]*Log
}

// New returns the logs of a replica. Run their flusher with Run.
func New(o Options) *Logs {
	ls := &Logs{st: o.Store, volatile: store.IsVolatile(o.Store), onLost: o.OnLost, stop: o.Stop, log: o.Logger, open: map[string]*Log{}}
	if ls.log == nil {
		ls.log = slog.Default()
	}
	if ls.stop == nil {
		ls.stop = make(chan struct{})
	}
	ls.flusher = newFlusher(ls, max(o.Window, 0))
	return ls
}

// Run makes live events durable until ctx is done, then flushes once more.
func (ls *Logs) Run(ctx context.Context) { ls.flusher.run(ctx) }

// New returns the log of a run that does not exist yet, active (an attempt
// is about to execute here) and held once; Register opens it.
func (ls *Logs) New(runID string) *Log {
	l := newLog(ls, runID, 0)
	l.refs, l.active = 1, true
	return l
}

// Register opens l, made by New. It fails with Conflict when a log of the
// run is open already.
func (ls *Logs) Register(l *Log) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.open[l.runID] != nil {
		return errdefs.Conflictf("run %s: its log is open already", l.runID)
	}
	ls.open[l.runID] = l
	return nil
}

// Acquire returns the run's log on this replica, opening it (dormant) from
// the store when needed. Pair with Release.
func (ls *Logs) Acquire(ctx context.Context, runID string) (*Log, error) {
	if l := ls.ref(runID); l != nil {
		return l, nil
	}
	// The task first: a terminal task's events are all durable before its
	// state is, so the log's end read afterwards is final.
	t, err := ls.st.GetTask(ctx, runID)
	if err != nil {
		return nil, err
	}
	page, err := ls.st.ReadEvents(ctx, runID, 1<<62, 1)
	if err != nil {
		return nil, err
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l, ok := ls.open[runID]; ok {
		l.refs++
		return l, nil
	}
	l := newLog(ls, runID, page.LastSeq)
	if t.State.Terminal() {
		l.terminal = page.LastSeq
	}
	l.refs = 1
	ls.open[runID] = l
	return l, nil
}

// ref returns the open log of the run, held once more, or nil.
func (ls *Logs) ref(runID string) *Log {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.open[runID]
	if l != nil {
		l.refs++
	}
	return l
}

// Activate is Acquire for an attempt about to execute here: the log is
// brought up to the store's end and marked active, with no fence yet.
func (ls *Logs) Activate(ctx context.Context, runID string) (*Log, error) {
	l, err := ls.Acquire(ctx, runID)
	if err != nil {
		return nil, err
	}
	if l.volatile {
		// Events an earlier attempt here showed are part of the run: they
		// go to the store before the new attempt continues the log. (A
		// volatile store has no other replica to take the run: the earlier
		// attempt's fence has nothing to keep out.)
		l.SetFence(store.Lease{})
		if err := l.Flush(ctx); err != nil {
			ls.Release(l)
			return nil, err
		}
	}
	page, err := ls.st.ReadEvents(ctx, runID, 1<<62, 1)
	if err != nil {
		ls.Release(l)
		return nil, err
	}
	l.activate(page.LastSeq)
	return l, nil
}

// Release drops a hold on l; an unheld, inactive log whose events are all
// durable is forgotten.
func (ls *Logs) Release(l *Log) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l.refs--
	if l.refs > 0 {
		return
	}
	l.mu.Lock()
	idle := !l.active && l.persisted >= l.last()
	l.mu.Unlock()
	if idle && ls.open[l.runID] == l {
		delete(ls.open, l.runID)
	}
}

// Wake tells readers of a run that executes elsewhere that its log grew (a
// wake-up from another replica, e.g. PostgreSQL NOTIFY): they re-read the
// store now instead of at their next poll. An empty runID wakes the readers
// of every such run (after a lost connection, when wake-ups may be missed).
func (ls *Logs) Wake(runID string) {
	ls.mu.Lock()
	var logs []*Log
	if runID == "" {
		for _, l := range ls.open {
			logs = append(logs, l)
		}
	} else if l := ls.open[runID]; l != nil {
		logs = append(logs, l)
	}
	ls.mu.Unlock()
	for _, l := range logs {
		l.mu.Lock()
		if !l.active {
			l.wakeLocked()
		}
		l.mu.Unlock()
	}
}
