package memstore_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// runIn writes a run the way the runtime does — created with an
// idempotency key, a transcript message and an event, checkpointed, with a
// push config — and leaves it in state.
func runIn(t *testing.T, ctx context.Context, s *memstore.Store, id, contextID string, state run.TaskState) {
	t.Helper()
	task := run.Task{ID: id, ContextID: contextID, AgentID: "a", State: run.StateWorking}
	msg := run.Message{ContextID: contextID, Message: model.Message{ID: "m-" + id, Role: model.RoleUser, Parts: []model.Part{model.TextPart("hi")}}}
	err := s.Apply(ctx, store.Change{
		TaskID: id, CreateTask: &task, Messages: []run.Message{msg},
		Idempotency: &store.IdempotencyKey{ContextID: contextID, MessageID: "m-" + id},
		Events:      []run.Event{{RunID: id, Seq: 1, Type: "run.start", Data: json.RawMessage(`{}`)}},
	})
	if err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	cp := engine.Checkpoint{ExecID: id, Board: &engine.BoardSnapshot{}, Attributes: map[string]string{store.AttrAttempt: "1"}}
	if err := s.SaveCheckpoint(ctx, cp); err != nil {
		t.Fatalf("checkpoint %s: %v", id, err)
	}
	if err := s.PutPushConfig(ctx, run.PushConfig{TaskID: id, ID: "p", Config: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("push config %s: %v", id, err)
	}
	if state == run.StateWorking {
		return
	}
	task.State, task.Version = state, 1
	err = s.Apply(ctx, store.Change{
		UpdateTask: &task,
		Events:     []run.Event{{RunID: id, Seq: 2, Type: "run.end", Data: json.RawMessage(`{}`)}},
	})
	if err != nil {
		t.Fatalf("finish %s: %v", id, err)
	}
}

// kept reports whether the store still holds run id, and fails the test
// when it holds only some of what belongs to it.
func kept(t *testing.T, ctx context.Context, s *memstore.Store, id, contextID string) bool {
	t.Helper()
	_, err := s.GetTask(ctx, id)
	if err != nil && !errdefs.IsNotFound(err) {
		t.Fatalf("GetTask(%s): %v", id, err)
	}
	task := err == nil
	evs, _ := s.ReadEvents(ctx, id, 0, 10)
	cp, _ := s.LoadCheckpoint(ctx, id)
	push, _ := s.ListPushConfigs(ctx, id)
	msgs, _ := s.ListMessages(ctx, run.MessageQuery{ContextID: contextID, TaskID: id})
	parts := []bool{len(evs.Events) > 0, cp != nil, len(push) > 0, len(msgs.Messages) > 0}
	for i, p := range parts {
		if p != task {
			t.Fatalf("run %s: task kept = %v but its %s kept = %v", id, task, []string{"events", "checkpoint", "push configs", "messages"}[i], p)
		}
	}
	return task
}

func TestRetentionForgetsOldestFinishedRuns(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.WithRetention(3))
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("t-%d", i)
		runIn(t, ctx, s, id, "c-"+id, run.StateCompleted)
	}
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("t-%d", i)
		if got, want := kept(t, ctx, s, id, "c-"+id), i > 2; got != want {
			t.Errorf("run %s kept = %v, want %v (retention 3 of 5 finished runs)", id, got, want)
		}
	}
	page, err := s.ListTasks(ctx, run.TaskQuery{})
	if err != nil || page.Total != 3 {
		t.Fatalf("ListTasks: total %d, %v; want 3", page.Total, err)
	}
	// The forgotten run's idempotency record went with it.
	again := run.Task{ID: "t-1b", ContextID: "c-t-1", AgentID: "a", State: run.StateSubmitted}
	err = s.Apply(ctx, store.Change{TaskID: again.ID, CreateTask: &again, Idempotency: &store.IdempotencyKey{ContextID: "c-t-1", MessageID: "m-t-1"}})
	if err != nil {
		t.Fatalf("resubmitting a forgotten run's key: %v, want a new task", err)
	}
}

func TestRetentionKeepsUnfinishedRunsAndSharedContexts(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.WithRetention(1))
	runIn(t, ctx, s, "working", "shared", run.StateWorking)
	runIn(t, ctx, s, "parked", "other", run.StateInputRequired)
	runIn(t, ctx, s, "old", "shared", run.StateFailed)
	runIn(t, ctx, s, "new", "fresh", run.StateCompleted)
	for _, tc := range []struct {
		id, context string
		want        bool
	}{
		{"working", "shared", true},
		{"parked", "other", true},
		{"old", "shared", false},
		{"new", "fresh", true},
	} {
		if got := kept(t, ctx, s, tc.id, tc.context); got != tc.want {
			t.Errorf("run %s kept = %v, want %v", tc.id, got, tc.want)
		}
	}
	// A context keeps its transcript while one of its tasks is kept.
	page, err := s.ListMessages(ctx, run.MessageQuery{ContextID: "shared"})
	if err != nil || len(page.Messages) != 2 {
		t.Fatalf("transcript of the shared context: %d messages, %v; want both", len(page.Messages), err)
	}
	tasks, err := s.ListTasks(ctx, run.TaskQuery{ContextID: "shared"})
	if err != nil || tasks.Total != 1 {
		t.Fatalf("ListTasks(context shared): total %d, %v; want 1", tasks.Total, err)
	}
}

func TestRetentionBoundsFinishedRuns(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		opts   []memstore.Option
		finish int
		max    int
	}{
		{"default keeps a small history", nil, 100, 100},
		{"evicts in batches, never above the bound", []memstore.Option{memstore.WithRetention(32)}, 200, 32},
		{"zero keeps everything", []memstore.Option{memstore.WithRetention(0)}, 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memstore.New(tc.opts...)
			for i := range tc.finish {
				id := fmt.Sprintf("t-%03d", i)
				runIn(t, ctx, s, id, "c-"+id, run.StateCompleted)
				page, err := s.ListTasks(ctx, run.TaskQuery{Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				if page.Total > tc.max {
					t.Fatalf("after %d finished runs the store keeps %d, want at most %d", i+1, page.Total, tc.max)
				}
				if page.Tasks[0].ID != id {
					t.Fatalf("newest task is %s, want %s", page.Tasks[0].ID, id)
				}
			}
		})
	}
}

// TestRetentionInAnyOrder checks that the task listing stays exact when
// runs finish in another order than they were created, some created at
// the same time: eviction then removes keys from the middle of the index.
func TestRetentionInAnyOrder(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.WithRetention(4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 40
	for i := range n {
		id := fmt.Sprintf("t-%02d", i)
		task := run.Task{ID: id, ContextID: "c-" + id, AgentID: "a", State: run.StateWorking, CreatedAt: base.Add(time.Duration(r.IntN(8)) * time.Second)}
		if err := s.Apply(ctx, store.Change{CreateTask: &task}); err != nil {
			t.Fatal(err)
		}
	}
	var kept []string // the finished runs the store should keep, as it evicts
	for _, i := range r.Perm(n) {
		id := fmt.Sprintf("t-%02d", i)
		task, err := s.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		task.State = run.StateCompleted
		if err := s.Apply(ctx, store.Change{UpdateTask: &task}); err != nil {
			t.Fatal(err)
		}
		if kept = append(kept, id); len(kept) > 4 {
			kept = kept[len(kept)-3:]
		}
		page, err := s.ListTasks(ctx, run.TaskQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var got, unfinished []string
		for _, task := range page.Tasks {
			if task.State == run.StateCompleted {
				got = append(got, task.ID)
			} else {
				unfinished = append(unfinished, task.ID)
			}
		}
		if page.Total != len(page.Tasks) || len(got) != len(kept) || len(got)+len(unfinished) != len(page.Tasks) {
			t.Fatalf("ListTasks: total %d, %d finished tasks listed, want %d", page.Total, len(got), len(kept))
		}
		want := slices.Clone(kept)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("finished tasks listed %v, want %v", got, want)
		}
		if !slices.IsSortedFunc(page.Tasks, func(a, b run.Task) int {
			return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
		}) {
			t.Fatalf("ListTasks is not newest first")
		}
	}
}

// TestRetentionReusedID checks that a run finished twice, forgotten and
// then created anew under the same id (in another context) is evicted by
// its own finish, not by the stale record of the old run's second one,
// and that the task indexes stay exact meanwhile.
func TestRetentionReusedID(t *testing.T) {
	s, ctx := memstore.New(memstore.WithRetention(4)), context.Background()
	finish := func(id, contextID string) {
		t.Helper()
		runIn(t, ctx, s, id, contextID, run.StateCompleted)
	}
	// Finished: a, b0, b1, a again (it moved on in between), b2; a and b0
	// are forgotten, down to 3.
	finish("a", "ctx-a")
	finish("b0", "ctx-b0")
	finish("b1", "ctx-b1")
	task, err := s.GetTask(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []run.TaskState{run.StateWorking, run.StateFailed} {
		task.State = st
		if err := s.Apply(ctx, store.Change{UpdateTask: &task}); err != nil {
			t.Fatalf("update a to %s: %v", st, err)
		}
		task.Version++
	}
	finish("b2", "ctx-b2")
	if kept(t, ctx, s, "a", "ctx-a") {
		t.Fatal("a kept")
	}
	// Finished: b1, a (the old one's second finish), b2, a (the new one),
	// c0; b1 and the old a's record are dropped.
	finish("a", "ctx-a2")
	finish("c0", "ctx-c0")
	if !kept(t, ctx, s, "a", "ctx-a2") {
		t.Fatal("new a forgotten by the old a's second finish")
	}
	page, err := s.ListTasks(ctx, run.TaskQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range page.Tasks {
		ids = append(ids, task.ID)
	}
	if want := []string{"c0", "a", "b2"}; !slices.Equal(ids, want) || page.Total != len(want) {
		t.Fatalf("tasks %v (total %d), want %v", ids, page.Total, want)
	}
	for i := range 3 { // the new a's own finish is the oldest then
		finish(fmt.Sprint("c", i+1), fmt.Sprint("ctx-c", i+1))
	}
	if kept(t, ctx, s, "a", "ctx-a2") {
		t.Fatal("new a kept")
	}
}
