package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// The atomicity fixture: task t-0 (version 1) in context c-0 with one
// transcript message, and run r-0 with one event. Every failing change
// below also tries to append to all of them, to start run r-new, to create
// or update a task and to record key c-0/m-new.
const (
	fixTask   = "t-0"
	fixCtx    = "c-0"
	fixRun    = "r-0"
	newRun    = "r-new"
	newTaskID = "t-new"
	newMsgID  = "m-new"
)

func testApplyAtomicity(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"EmptyChangeIsNoop":         testEmptyChange,
		"FullChangeWritesAll":       testFullChange,
		"CreateAnswersStored":       testCreateAnswersStored,
		"FailedChangeWritesNothing": testFailedChanges,
	})
	t.Run("EachFailureWritesNothing", func(t *testing.T) {
		for _, c := range failingChanges() {
			t.Run(c.name, func(t *testing.T) {
				s := f(t)
				ctx := t.Context()
				seedAtomicity(t, ctx, s)
				err := s.Apply(ctx, c.change())
				wantClass(t, err, c.class, "Apply("+c.name+")")
				wantUntouched(t, ctx, s)
			})
		}
	})
}

func testEmptyChange(t *testing.T, s store.Store) {
	wantNoError(t, s.Apply(t.Context(), store.Change{}), "Apply(empty change)")
}

func seedAtomicity(t *testing.T, ctx context.Context, s store.Store) {
	t.Helper()
	apply(t, ctx, s, store.Change{
		Idempotency: &store.IdempotencyKey{ContextID: fixCtx, MessageID: "m-0"},
		TaskID:      fixTask,
		CreateTask:  newTask(fixTask, fixCtx, 1),
		Messages:    []run.Message{textMessage(fixCtx, "m-0", "first")},
		Events:      runEvents(fixRun, 1, 1),
	})
}

// fullChange is a valid change touching every part of the fixture; the
// failing changes spoil one part of it.
func fullChange() store.Change {
	upd := newTask(fixTask, fixCtx, 1)
	upd.Version = 1
	upd.State = run.StateWorking
	return store.Change{
		Idempotency: &store.IdempotencyKey{ContextID: fixCtx, MessageID: newMsgID},
		TaskID:      newTaskID,
		CreateTask:  newTask(newTaskID, fixCtx, 2),
		UpdateTask:  upd,
		Messages:    []run.Message{textMessage(fixCtx, newMsgID, "second"), textMessage(fixCtx, "m-reply", "third")},
		Events:      append(runEvents(fixRun, 2, 3), runEvents(newRun, 1, 2)...),
	}
}

// A create asked for the task as stored answers what GetTask reads, and
// stores the task's version plus one: a run's create folded into its
// final commit answers its blocking caller from it, at the version the
// create and the update would have left.
func testCreateAnswersStored(t *testing.T, s store.Store) {
	ctx := t.Context()
	task := newTask(newTaskID, fixCtx, 1)
	task.State = run.StateCompleted
	task.Usage = model.TokenUsage{InputTokens: 3, OutputTokens: 5, TotalTokens: 8}
	task.Version = 1 // folded together with its first update: stored at 2
	var stored run.Task
	apply(t, ctx, s, store.Change{TaskID: task.ID, CreateTask: task, Stored: &stored})
	got := getTask(t, ctx, s, newTaskID)
	if got.Version != 2 {
		t.Errorf("created task version = %d, want 2 (its version plus one)", got.Version)
	}
	if !reflect.DeepEqual(stored, got) {
		t.Errorf("Change.Stored = %+v, want the task as GetTask reads it: %+v", stored, got)
	}
}

func testFullChange(t *testing.T, s store.Store) {
	ctx := t.Context()
	seedAtomicity(t, ctx, s)
	c := fullChange()
	var stored run.Task
	c.Stored = &stored
	apply(t, ctx, s, c)
	got := getTask(t, ctx, s, fixTask)
	if got.Version != 2 {
		t.Errorf("updated task version = %d, want 2", got.Version)
	}
	if !reflect.DeepEqual(stored, got) {
		t.Errorf("Change.Stored = %+v, want the task as GetTask reads it: %+v", stored, got)
	}
	getTask(t, ctx, s, newTaskID)
	page, err := s.ListMessages(ctx, run.MessageQuery{ContextID: fixCtx})
	wantNoError(t, err, "ListMessages")
	if got := positions(page.Messages); len(got) != 3 {
		t.Errorf("transcript positions after the change = %v, want [1 2 3]", got)
	}
	for run, want := range map[string]int64{fixRun: 3, newRun: 2} {
		if ep := readAll(t, ctx, s, run); ep.LastSeq != want {
			t.Errorf("run %s LastSeq = %d, want %d", run, ep.LastSeq, want)
		}
	}
}

// testFailedChanges checks a failure in the last part of a change (the
// second run's events) rolls back the earlier parts of the same change.
func testFailedChanges(t *testing.T, s store.Store) {
	ctx := t.Context()
	seedAtomicity(t, ctx, s)
	c := fullChange()
	c.Events = append(runEvents(fixRun, 2, 3), runEvents(newRun, 2, 2)...)
	wantClass(t, s.Apply(ctx, c), errdefs.ClassConflict, "Apply with a gap in the last run's events")
	wantUntouched(t, ctx, s)
}

type failingChange struct {
	name   string
	class  errdefs.Class
	change func() store.Change
}

func failingChanges() []failingChange {
	spoil := func(f func(c *store.Change)) func() store.Change {
		return func() store.Change {
			c := fullChange()
			f(&c)
			return c
		}
	}
	return []failingChange{
		{"duplicate task id", errdefs.ClassConflict, spoil(func(c *store.Change) {
			c.CreateTask = newTask(fixTask, fixCtx, 2)
			c.UpdateTask = nil
		})},
		{"stale task version", errdefs.ClassConflict, spoil(func(c *store.Change) { c.UpdateTask.Version = 7 })},
		{"update of unknown task", errdefs.ClassNotFound, spoil(func(c *store.Change) { c.UpdateTask.ID = "t-ghost" })},
		{"seq gap", errdefs.ClassConflict, spoil(func(c *store.Change) { c.Events = runEvents(fixRun, 3, 4) })},
		{"seq repeated", errdefs.ClassConflict, spoil(func(c *store.Change) { c.Events = runEvents(fixRun, 1, 2) })},
		{"new run not starting at 1", errdefs.ClassConflict, spoil(func(c *store.Change) { c.Events = runEvents(newRun, 2, 3) })},
		{"duplicate idempotency key", errdefs.ClassConflict, spoil(func(c *store.Change) {
			c.Idempotency = &store.IdempotencyKey{ContextID: fixCtx, MessageID: "m-0"}
		})},
		{"invalid event data", errdefs.ClassValidation, spoil(func(c *store.Change) {
			c.Events[len(c.Events)-1].Data = json.RawMessage(`{"unterminated": `)
		})},
		{"message without context", errdefs.ClassValidation, spoil(func(c *store.Change) { c.Messages[1].ContextID = "" })},
		{"invalid new task", errdefs.ClassValidation, spoil(func(c *store.Change) { c.CreateTask.State = "bogus" })},
	}
}

// wantUntouched checks the atomicity fixture is exactly as seeded: nothing
// of a failed change was written.
func wantUntouched(t *testing.T, ctx context.Context, s store.Store) {
	t.Helper()
	task := getTask(t, ctx, s, fixTask)
	if task.Version != 1 || task.State != run.StateSubmitted {
		t.Errorf("task %s after a failed change: version %d, state %s; want version 1, state submitted", fixTask, task.Version, task.State)
	}
	_, err := s.GetTask(ctx, newTaskID)
	wantClass(t, err, errdefs.ClassNotFound, "GetTask of the task a failed change created")
	page, err := s.ListMessages(ctx, run.MessageQuery{ContextID: fixCtx})
	wantNoError(t, err, "ListMessages")
	if got := positions(page.Messages); len(got) != 1 {
		t.Errorf("transcript of %s after a failed change has positions %v, want [1]", fixCtx, got)
	}
	for run, want := range map[string]int64{fixRun: 1, newRun: 0} {
		if ep := readAll(t, ctx, s, run); ep.LastSeq != want || int64(len(ep.Events)) != want {
			t.Errorf("run %s after a failed change: LastSeq %d, %d events; want %d and %d", run, ep.LastSeq, len(ep.Events), want, want)
		}
	}
	// The key of the failed change was not recorded: it is free to use.
	apply(t, ctx, s, store.Change{
		Idempotency: &store.IdempotencyKey{ContextID: fixCtx, MessageID: newMsgID},
		TaskID:      "t-later",
	})
	// And the positions continue densely after the failure.
	apply(t, ctx, s, store.Change{Messages: []run.Message{textMessage(fixCtx, "m-later", "later")}})
	page, err = s.ListMessages(ctx, run.MessageQuery{ContextID: fixCtx})
	wantNoError(t, err, "ListMessages")
	if got := positions(page.Messages); len(got) != 2 || got[1] != 2 {
		t.Errorf("positions after a failed change and one append = %v, want [1 2]", got)
	}
}

// readAll reads every event of run after 0.
func readAll(t *testing.T, ctx context.Context, s store.Store, run string) run.EventPage {
	t.Helper()
	page, err := s.ReadEvents(ctx, run, 0, 1000)
	wantNoError(t, err, "ReadEvents("+run+")")
	return page
}
