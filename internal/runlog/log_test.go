package runlog

import (
	"context"
	"testing"
	"time"

	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// A state commit's events stay hidden until the commit succeeded; when it
// fails they are forgotten, while live events shown before it stay, still
// to be written.
func TestVolatileLogHidesAFailedCommit(t *testing.T) {
	ls := New(Options{Store: memstore.New(), Volatile: true})
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ls := New(Options{Store: memstore.New(), Window: time.Hour})
	done := make(chan struct{})
	go func() { defer close(done); ls.Run(ctx) }()
	defer func() { cancel(); <-done }()
	l := ls.New("r")
	if err := ls.Register(l); err != nil {
		t.Fatal(err)
	}
	task := store.Task{ID: "r", ContextID: "c", AgentID: "a", State: store.StateWorking, CreatedAt: time.Now(), UpdatedAt: time.Now()}
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
