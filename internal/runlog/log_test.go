package runlog

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// A state commit's events stay hidden until the commit succeeded; when it
// fails they are forgotten, while live events shown before it stay, still
// to be written.
func TestVolatileLogHidesAFailedCommit(t *testing.T) {
	ls := New(Options{Store: memstore.New()}) // memstore is store.Volatile
	l := ls.New("r")
	l.Append("delta", Object([]byte(`{"text":"a"}`)))
	l.Append("delta", Object([]byte(`{"text":"b"}`)))
	if res := l.read(0, 10); len(res.events) != 2 {
		t.Fatalf("live events not shown at once: %d", len(res.events))
	}
	if len(ls.flusher.dirty) != 1 {
		t.Fatalf("the flusher was not told of the live events")
	}

	l.flushMu.Lock()
	first, _ := l.beginCommit([]Entry{{Type: "status"}, {Type: "run.end"}}, []Body{{}, {}})
	if first != 3 {
		t.Fatalf("commit events start at %d, want 3", first)
	}
	l.Append("delta", Object([]byte(`{"text":"late"}`))) // a publisher racing the commit
	if res := l.read(2, 10); len(res.events) != 0 {
		t.Fatalf("events of a commit in flight were shown: %d", len(res.events))
	}
	l.endCommit(false, 0)
	l.flushMu.Unlock()
	if res := l.read(0, 10); len(res.events) != 2 || l.last() != 2 {
		t.Fatalf("after a failed commit: %d shown, log ends at %d; want the 2 live events", len(res.events), l.last())
	}
	if p := l.pending(); len(p) != 2 {
		t.Fatalf("%d events pending, want the 2 shown live ones still to be written", len(p))
	}

	l.flushMu.Lock()
	l.beginCommit([]Entry{{Type: "run.end"}}, []Body{{}})
	l.endCommit(true, 3)
	l.flushMu.Unlock()
	if res := l.read(0, 10); len(res.events) != 3 || l.persisted != 3 {
		t.Fatalf("after a commit: %d shown, %d durable; want 3 and 3", len(res.events), l.persisted)
	}
}

// With a durable store, live events are visible once written: the first
// delta of an attempt (and what comes before it) is written at once, the
// deltas after it wait for the flusher's window (an hour here).
func TestFirstDeltaIsWrittenAtOnce(t *testing.T) {
	ctx := t.Context()
	ls := running(t, shared(memstore.New()), time.Hour)
	l := registered(t, ls, "r")
	task := run.Task{ID: "r", ContextID: "c", AgentID: "a", State: run.StateWorking, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := l.Commit(ctx, store.Change{TaskID: "r", CreateTask: &task}, nil, Entry{Type: "run.start", Body: map[string]int{"attempt": 1}}); err != nil {
		t.Fatal(err)
	}
	visible := func() int64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.shown
	}
	l.Append("step.start", Object([]byte(`{"actor":"a"}`)))
	l.Append(EventDelta, Object([]byte(`{"text":"first"}`)))
	deadline := time.Now().Add(10 * time.Second)
	for visible() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := visible(); got != 3 {
		t.Fatalf("visible through seq %d, want 3: the first delta waited for the window", got)
	}
	l.Append(EventDelta, Object([]byte(`{"text":"second"}`)))
	time.Sleep(100 * time.Millisecond)
	if got := visible(); got != 3 {
		t.Fatalf("visible through seq %d: a later delta did not wait for the window", got)
	}
	if err := l.Flush(ctx); err != nil || visible() != 4 {
		t.Fatalf("Flush: %v, visible through %d, want 4", err, visible())
	}
}

// blockingStore holds every Apply that carries an event of run hold with
// a seq of at least from (2 when zero) until release is closed.
type blockingStore struct {
	store.Store
	hold    string
	from    int64
	held    chan struct{} // closed when an Apply is held
	once    sync.Once
	release chan struct{}
}

func (b *blockingStore) Apply(ctx context.Context, c store.Change) error {
	for _, e := range c.Events {
		if e.RunID == b.hold && e.Seq >= cmp.Or(b.from, 2) {
			b.once.Do(func() { close(b.held) })
			<-b.release
			break
		}
	}
	return b.Store.Apply(ctx, c)
}

// An attempt's first delta does not wait behind the windowed batch in
// flight: here that batch (another run's deltas) is stuck in the store,
// and the first delta is visible all the same.
func TestFirstDeltaDoesNotWaitForTheBatchInFlight(t *testing.T) {
	st := &blockingStore{Store: memstore.New(), hold: "busy", held: make(chan struct{}), release: make(chan struct{})}
	ls := running(t, st, time.Millisecond)
	defer close(st.release) // before the Logs stop (cleanup)
	busy, fresh := registered(t, ls, "busy"), registered(t, ls, "fresh")
	busy.Append(EventDelta, Object([]byte(`{"text":"first"}`))) // written at once
	for durable(busy) < 1 {
		time.Sleep(time.Millisecond)
	}
	busy.Append(EventDelta, Object([]byte(`{"text":"second"}`)))
	<-st.held // the windowed batch with busy's second delta is stuck
	fresh.Append(EventDelta, Object([]byte(`{"text":"hello"}`)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		fresh.mu.Lock()
		shown := fresh.shown
		fresh.mu.Unlock()
		if shown == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the first delta waited for the batch in flight")
		}
		time.Sleep(time.Millisecond)
	}
}

func durable(l *Log) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.persisted
}

// Deltas appended while the write of the first delta is in flight (it
// holds the log) are written by a later round, not left behind: the log
// is dirty already, so no append marks it again.
func TestDeltasBehindTheFirstDeltasWriteAreWritten(t *testing.T) {
	st := &blockingStore{Store: memstore.New(), hold: "r", held: make(chan struct{}), release: make(chan struct{}), from: 1}
	ls := running(t, st, time.Millisecond)
	l := registered(t, ls, "r")
	l.Append(EventDelta, Object([]byte(`{"text":"first"}`)))
	<-st.held // the first delta's write holds the log
	for range 3 {
		l.Append(EventDelta, Object([]byte(`{"text":"more"}`)))
	}
	time.Sleep(20 * time.Millisecond) // rounds of the windowed writer meet the held log
	close(st.release)
	deadline := time.Now().Add(10 * time.Second)
	for durable(l) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("durable through seq %d, want 4: deltas left behind", durable(l))
		}
		time.Sleep(time.Millisecond)
	}
}

// running returns Logs on st, flushing with window until the test ends.
func running(t *testing.T, st store.Store, window time.Duration) *Logs {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ls := New(Options{Store: st, Window: window})
	done := make(chan struct{})
	go func() { defer close(done); ls.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ls
}

// registered is a new, registered log of run id.
func registered(t *testing.T, ls *Logs, id string) *Log {
	t.Helper()
	l := ls.New(id)
	if err := ls.Register(l); err != nil {
		t.Fatal(err)
	}
	return l
}

// shared hides a memstore's store.Volatile: the log then treats it as a
// store replicas share, showing events only once they are written.
func shared(st store.Store) store.Store { return struct{ store.Store }{st} }
