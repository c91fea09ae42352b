package runtime

import (
	"context"
	"sync/atomic"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// lostAnswer is a store whose first commit that creates a task goes
// through but whose answer is lost, as when the connection breaks while
// COMMIT is in flight (pgstore's ErrCommitUnknown, classified NotAvailable).
type lostAnswer struct {
	store.Store
	lost atomic.Bool
}

func (s *lostAnswer) Apply(ctx context.Context, c store.Change) error {
	err := s.Store.Apply(ctx, c)
	if err == nil && c.CreateTask != nil && s.lost.CompareAndSwap(false, true) {
		return errdefs.NotAvailablef("commit outcome unknown: connection lost")
	}
	return err
}

// A creation commit whose answer is lost is resolved by the retry, which
// finds the task stored: Send succeeds with that one task, and the run —
// whose lease was committed with it — executes here and completes.
func TestCreateCommitWithUnknownOutcome(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) {
		st := &lostAnswer{Store: shared}
		r := replica(t, st, "A", answerer())
		task := send(t, r, "c", "hello")
		if !st.lost.Load() {
			t.Fatal("the create commit's answer was never lost: the test tested nothing")
		}
		if done := wait(t, r, task.ID); done.State != run.StateCompleted || done.Attempt != 1 {
			t.Fatalf("run after the lost answer: %s in attempt %d, want completed in attempt 1", done.State, done.Attempt)
		}
		page, err := shared.ListTasks(ctxT(t), run.TaskQuery{ContextID: task.ContextID})
		if err != nil || page.Total != 1 {
			t.Fatalf("tasks in the context: %d (%v), want exactly one", page.Total, err)
		}
		evs := readAll(t, r, task.ID, 0, true)
		if evs[0].Type != EventRunStart || evs[len(evs)-1].Type != EventRunEnd {
			t.Fatalf("log %s … %s, want run.start … run.end", evs[0].Type, evs[len(evs)-1].Type)
		}
	})
}
