package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// RunDeleterStore is a store that deletes runs.
type RunDeleterStore interface {
	store.Store
	store.RunDeleter
}

// RunRunDeleterSuite is the contract of store.RunDeleter: a run that has
// not finished is not deleted; a finished one goes with its events,
// checkpoints, push configs, idempotency keys and transcript messages,
// while the other runs of its context and their messages' positions stay;
// another tenant's run is not found.
func RunRunDeleterSuite(t *testing.T, newStore func(t *testing.T) RunDeleterStore) {
	t.Run("DeletesAFinishedRunAndWhatIsItsOnly", func(t *testing.T) {
		s, ctx := newStore(t), context.Background()
		a := seedDeletableRun(t, ctx, s)
		if err := s.DeleteRun(ctx, a.ID); !errdefs.IsConflict(err) {
			t.Fatalf("delete a submitted run: %v, want Conflict", err)
		}
		getTask(t, ctx, s, a.ID) // still there
		done := a
		done.State = run.StateCompleted
		apply(t, ctx, s, store.Change{TaskID: a.ID, UpdateTask: &done})
		if err := s.DeleteRun(run.WithTenant(ctx, "other"), a.ID); !errdefs.IsNotFound(err) {
			t.Fatalf("delete from another tenant: %v, want NotFound", err)
		}
		wantNoError(t, s.DeleteRun(ctx, a.ID), "DeleteRun")
		checkRunDeleted(t, ctx, s, a.ID)
		if err := s.DeleteRun(ctx, a.ID); !errdefs.IsNotFound(err) {
			t.Fatalf("second delete: %v, want NotFound", err)
		}
	})
	t.Run("LastRunOfItsContext", func(t *testing.T) {
		s, ctx := newStore(t), context.Background()
		task := newTask("solo", "c2", 1)
		task.State = run.StateFailed
		createTask(t, ctx, s, task)
		apply(t, ctx, s, store.Change{TaskID: "solo", Messages: []run.Message{withTask(textMessage("c2", "s-1", "hi"), "solo")}})
		wantNoError(t, s.DeleteRun(ctx, "solo"), "DeleteRun(solo)")
		page, err := s.ListMessages(ctx, run.MessageQuery{ContextID: "c2"})
		wantNoError(t, err, "ListMessages(c2)")
		if len(page.Messages) != 0 {
			t.Fatalf("transcript after delete = %v, want empty", positions(page.Messages))
		}
	})
}

func withTask(m run.Message, taskID string) run.Message {
	m.TaskID = taskID
	return m
}

// seedDeletableRun stores in context c1 a submitted run A (two messages,
// an idempotency key, events, a checkpoint, a push config) between
// messages of a finished run B, and returns A.
func seedDeletableRun(t *testing.T, ctx context.Context, s store.Store) run.Task {
	t.Helper()
	b := newTask("run-b", "c1", 1)
	b.State = run.StateCompleted
	createTask(t, ctx, s, b)
	apply(t, ctx, s, store.Change{TaskID: "run-b", Messages: []run.Message{withTask(textMessage("c1", "b-1", "before"), "run-b")}})
	a := createTask(t, ctx, s, newTask("run-a", "c1", 2))
	apply(t, ctx, s, store.Change{
		TaskID: "run-a", Idempotency: &store.IdempotencyKey{ContextID: "c1", MessageID: "a-1"},
		Messages: []run.Message{withTask(textMessage("c1", "a-1", "ask"), "run-a"), withTask(textMessage("c1", "a-2", "answer"), "run-a")},
	})
	apply(t, ctx, s, store.Change{TaskID: "run-b", Messages: []run.Message{withTask(textMessage("c1", "b-2", "after"), "run-b")}})
	appendEvents(t, ctx, s, "run-a", 1, 3)
	wantNoError(t, s.SaveCheckpoint(ctx, checkpoint("run-a", 1, 1)), "SaveCheckpoint")
	wantNoError(t, s.PutPushConfig(ctx, run.PushConfig{TaskID: "run-a", ID: "p1", Config: json.RawMessage(`{"url":"http://x.test/"}`)}), "PutPushConfig")
	return getTask(t, ctx, s, a.ID)
}

// checkRunDeleted checks that run-a and everything of it is gone, and that
// run-b and its messages stay where they were.
func checkRunDeleted(t *testing.T, ctx context.Context, s store.Store, id string) {
	t.Helper()
	if _, err := s.GetTask(ctx, id); !errdefs.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
	page, err := s.ListMessages(ctx, run.MessageQuery{ContextID: "c1"})
	wantNoError(t, err, "ListMessages(c1)")
	if got := positions(page.Messages); len(got) != 2 || got[0] != 1 || got[1] != 4 {
		t.Fatalf("transcript positions after delete = %v, want [1 4] (run-b's)", got)
	}
	last, err := s.ListMessages(ctx, run.MessageQuery{ContextID: "c1", Last: 1})
	if wantNoError(t, err, "ListMessages(last)"); len(last.Messages) != 1 || last.Messages[0].ID != "b-2" {
		t.Fatalf("last message after delete = %+v", last.Messages)
	}
	own, err := s.ListMessages(ctx, run.MessageQuery{ContextID: "c1", TaskID: id})
	if wantNoError(t, err, "ListMessages(task)"); len(own.Messages) != 0 {
		t.Fatalf("the deleted run's messages = %v", positions(own.Messages))
	}
	tasks, err := s.ListTasks(ctx, run.TaskQuery{ContextID: "c1"})
	if wantNoError(t, err, "ListTasks"); len(tasks.Tasks) != 1 || tasks.Tasks[0].ID != "run-b" {
		t.Fatalf("context's tasks after delete = %v", ids(tasks.Tasks))
	}
	evs, err := s.ReadEvents(ctx, id, 0, 10)
	if wantNoError(t, err, "ReadEvents"); len(evs.Events) != 0 {
		t.Fatalf("events after delete = %v", seqs(evs.Events))
	}
	cps, err := s.ListCheckpoints(ctx, id)
	if wantNoError(t, err, "ListCheckpoints"); len(cps) != 0 {
		t.Fatalf("%d checkpoints after delete", len(cps))
	}
	push, err := s.ListPushConfigs(ctx, id)
	if wantNoError(t, err, "ListPushConfigs"); len(push) != 0 {
		t.Fatalf("%d push configs after delete", len(push))
	}
	claimed, err := s.ClaimPushDeliveries(ctx, "replica-x", time.Minute, 10)
	wantNoError(t, err, "ClaimPushDeliveries")
	for _, c := range claimed {
		if c.TaskID == id {
			t.Fatalf("the deleted run's push config %s is still claimed for delivery", c.ID)
		}
	}
	// The idempotency key is free again.
	again := newTask("run-c", "c1", 5)
	apply(t, ctx, s, store.Change{TaskID: "run-c", CreateTask: again, Idempotency: &store.IdempotencyKey{ContextID: "c1", MessageID: "a-1"}})
}
