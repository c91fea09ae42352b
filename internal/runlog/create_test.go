package runlog

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// writes records the successful Applies of a (non-volatile) store, and
// fails the next one when told to.
type writes struct {
	store.Store
	mu      sync.Mutex
	changes []store.Change
	failOne error
}

func (w *writes) Apply(ctx context.Context, c store.Change) error {
	w.mu.Lock()
	fail := w.failOne
	w.failOne = nil
	w.mu.Unlock()
	if fail != nil {
		return fail
	}
	if err := w.Store.Apply(ctx, c); err != nil {
		return err
	}
	w.mu.Lock()
	w.changes = append(w.changes, c)
	w.mu.Unlock()
	return nil
}

func (w *writes) written() []store.Change {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.changes)
}

// deferredRun defers run id's create on ls (quiet: a blocking send's):
// a working task, its user message, a lease claim and the run.start
// entry.
func deferredRun(t *testing.T, ls *Logs, id string, quiet bool) (*Log, *Create) {
	t.Helper()
	l := registered(t, ls, id)
	task := run.Task{ID: id, ContextID: "c-" + id, AgentID: "a", State: run.StateWorking, Attempt: 1, CreatedAt: store.StoredTime(time.Now())}
	create := store.Change{
		TaskID: id, CreateTask: &task,
		Messages: []run.Message{{ContextID: task.ContextID, TaskID: id}},
		Lease:    &store.LeaseClaim{Owner: "A", TTL: time.Minute},
	}
	c, err := l.Defer(create, quiet, Entry{Type: "run.start", Body: map[string]int{"attempt": 1}})
	if err != nil {
		t.Fatalf("Defer: %v", err)
	}
	if c.at != 1 {
		t.Fatalf("the create's entries end at seq %d, want run.start at 1", c.at)
	}
	return l, c
}

// landedWith waits for c to land and returns the write that carried it:
// the first one st took.
func landedWith(t *testing.T, st *writes, c *Create) store.Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		t.Fatal("the deferred create was not written")
	}
	ws := st.written()
	if len(ws) == 0 {
		t.Fatal("the deferred create landed without a write")
	}
	return ws[0]
}

// A run that ends within the window is one write: its final commit
// carries the create, the create's entries, the deltas and the final
// entries. Nothing of it is visible before.
func TestDeferredCreateRidesWithTheFinalCommit(t *testing.T) {
	ctx := t.Context()
	st := &writes{Store: memstore.New()}
	ls := running(t, st, time.Hour)
	l, create := deferredRun(t, ls, "r", true)
	l.Append(EventDelta, Object([]byte(`{"text":"a"}`)))
	l.Append(EventDelta, Object([]byte(`{"text":"b"}`)))
	time.Sleep(20 * time.Millisecond) // the first delta is not written at once
	if res := l.read(0, 10); len(res.events) != 0 {
		t.Fatalf("%d events of a deferred create visible before any write", len(res.events))
	}
	if _, err := st.GetTask(ctx, "r"); !errdefs.IsNotFound(err) {
		t.Fatalf("GetTask before the first write: %v, want not found", err)
	}
	done := run.Task{ID: "r", ContextID: "c-r", AgentID: "a", State: run.StateCompleted, Attempt: 1, Version: 1}
	var stored run.Task
	if _, err := l.Commit(ctx, store.Change{UpdateTask: &done, Stored: &stored}, nil, Entry{Type: "run.end"}); err != nil {
		t.Fatal(err)
	}
	ws := st.written()
	if len(ws) != 1 {
		t.Fatalf("%d writes, want 1 (the final commit carrying the create)", len(ws))
	}
	c := ws[0]
	if c.CreateTask == nil || c.UpdateTask != nil || len(c.Events) != 4 || len(c.Messages) != 1 {
		t.Fatalf("the write: create %v, update %v, %d events, %d messages; want a create, 4 events, 1 message",
			c.CreateTask != nil, c.UpdateTask != nil, len(c.Events), len(c.Messages))
	}
	if stored.State != run.StateCompleted || stored.Version != 2 {
		t.Fatalf("stored task %s at version %d, want completed at 2", stored.State, stored.Version)
	}
	select {
	case <-create.done:
	default:
		t.Fatal("the create is not done after the write that carried it")
	}
	if l := create.TakeLease(); l.RunID != "" {
		t.Fatalf("a run that ended with its create holds lease %+v", l)
	}
	if res := l.read(0, 10); len(res.events) != 4 {
		t.Fatalf("%d events visible after the commit, want 4", len(res.events))
	}
}

// A run still going after the window is written by the flusher, create
// and all; the lease that write claimed fences the run's later writes, and
// the create hands it over once.
func TestDeferredCreateIsWrittenWithinTheWindow(t *testing.T) {
	ctx := t.Context()
	st := &writes{Store: memstore.New()}
	ls := running(t, st, 30*time.Millisecond)
	l, create := deferredRun(t, ls, "r", true)
	c := landedWith(t, st, create)
	if c.Lease == nil || c.Lease.Granted.Owner != "A" {
		t.Fatalf("the write that carried the create granted lease %+v, want one owned by A", c.Lease)
	}
	if fences := l.fences(nil); len(fences) != 1 || fences[0] != c.Lease.Granted {
		t.Fatalf("the log's writes are fenced by %+v, want the lease granted, %+v", fences, c.Lease.Granted)
	}
	if got := create.TakeLease(); got != c.Lease.Granted {
		t.Fatalf("TakeLease = %+v, want the lease granted, %+v", got, c.Lease.Granted)
	}
	if again := create.TakeLease(); again.RunID != "" {
		t.Fatalf("TakeLease again = %+v, want none: it was handed over", again)
	}
	if got, err := st.GetTask(ctx, "r"); err != nil || got.State != run.StateWorking || got.Version != 1 {
		t.Fatalf("GetTask after the window: %+v, %v; want working at version 1", got, err)
	}
	if ws := st.written(); len(ws) != 1 {
		t.Fatalf("%d writes, want 1", len(ws))
	}
}

// A stream's first live event is written at once, carrying the create.
func TestDeferredCreateRidesWithAStreamsFirstEvent(t *testing.T) {
	st := &writes{Store: memstore.New()}
	ls := running(t, st, time.Hour)
	l, create := deferredRun(t, ls, "r", false)
	l.Append(EventDelta, Object([]byte(`{"text":"first"}`)))
	if c := landedWith(t, st, create); c.CreateTask == nil || len(c.Events) != 2 {
		t.Fatalf("the first write: create %v, %d events; want the create and both events", c.CreateTask != nil, len(c.Events))
	}
}

// A final commit that fails leaves the create's entries in the log: the
// next write — the flusher's, here — still carries the create, and the
// failed commit's entries are gone.
func TestFailedCommitKeepsTheDeferredCreate(t *testing.T) {
	ctx := t.Context()
	st := &writes{Store: memstore.New()}
	ls := running(t, st, time.Hour) // the failed commit, not the window, hands it to the flusher
	l, create := deferredRun(t, ls, "r", true)
	st.mu.Lock()
	st.failOne = errdefs.Validationf("refused")
	st.mu.Unlock()
	done := run.Task{ID: "r", ContextID: "c-r", AgentID: "a", State: run.StateCompleted, Attempt: 1, Version: 1}
	_, err := l.Commit(ctx, store.Change{UpdateTask: &done}, nil, Entry{Type: "run.end"})
	if !errdefs.IsValidation(err) {
		t.Fatalf("Commit = %v, want the store's refusal", err)
	}
	if c := landedWith(t, st, create); c.CreateTask == nil || c.CreateTask.State != run.StateWorking || len(c.Events) != 1 {
		t.Fatalf("the create landed as %+v with %d events, want the working task and its run.start alone", c.CreateTask, len(c.Events))
	}
	page, err := st.ReadEvents(ctx, "r", 0, 10)
	if err != nil || len(page.Events) != 1 || page.Events[0].Type != "run.start" {
		t.Fatalf("stored events %+v, %v; want run.start alone", page.Events, err)
	}
}

// Logs that stop write the creates still deferred.
func TestStoppingLogsWriteDeferredCreates(t *testing.T) {
	st := &writes{Store: memstore.New()}
	ctx, cancel := context.WithCancel(context.Background())
	ls := New(Options{Store: st, Window: time.Hour})
	done := make(chan struct{})
	go func() { defer close(done); ls.Run(ctx) }()
	deferredRun(t, ls, "r", true)
	cancel()
	<-done
	if _, err := st.GetTask(context.Background(), "r"); err != nil {
		t.Fatalf("GetTask after the logs stopped: %v, want the task", err)
	}
}
