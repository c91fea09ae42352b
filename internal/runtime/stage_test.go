package runtime

import (
	"context"
	"slices"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// applies records the Applies of a (non-volatile) store: the events and
// checkpoints each carried.
type applies struct {
	store.Store
	mu      sync.Mutex
	changes []store.Change
	saves   int
}

func (a *applies) Apply(ctx context.Context, c store.Change) error {
	err := a.Store.Apply(ctx, c)
	if err == nil {
		c.Events = slices.Clone(c.Events) // the flusher reuses its batch's memory
		a.mu.Lock()
		a.changes = append(a.changes, c)
		a.mu.Unlock()
	}
	return err
}

func (a *applies) SaveCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	a.mu.Lock()
	a.saves++
	a.mu.Unlock()
	return a.Store.SaveCheckpoint(ctx, cp)
}

// A staged checkpoint (engine.CheckpointStager, the loop's final answer)
// costs no write of its own: the run's final commit — the one that logs
// run.end — saves it, and it is the run's newest checkpoint afterwards.
// The run is a blocking send's, whose deltas wait for the window (an hour
// here): otherwise the first delta's write, at once, could take the
// checkpoint staged right behind it, which is as correct but not this
// test's point.
func TestStagedCheckpointRidesWithTheFinalCommit(t *testing.T) {
	st := &applies{Store: memstore.New()} // wrapped: not volatile
	eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		stager, ok := h.(engine.CheckpointStager)
		if !ok {
			t.Fatal("the runtime's host is not an engine.CheckpointStager")
		}
		if err := h.Publish(ctx, engine.Token{Actor: "c", Text: "answer"}); err != nil {
			return nil, err
		}
		cp := engine.Checkpoint{ExecID: run.ID, Step: "final", Board: b.Snapshot()}
		if err := stager.StageCheckpoint(ctx, cp); err != nil {
			return nil, err
		}
		return b, nil
	})
	r := slowReplica(t, st, eng)
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "c", Message: model.NewText(model.RoleUser, "go"), Await: AwaitEnd})
	if err != nil {
		t.Fatal(err)
	}
	task := sub.Task
	if done := wait(t, r, task.ID); done.State != run.StateCompleted {
		t.Fatalf("run ended %s, want completed", done.State)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.saves != 0 {
		t.Fatalf("SaveCheckpoint called %d times, want none", st.saves)
	}
	var with []store.Change
	for _, c := range st.changes {
		if len(c.Checkpoints) > 0 {
			with = append(with, c)
		}
	}
	if len(with) != 1 {
		t.Fatalf("%d writes carried a checkpoint, want exactly one", len(with))
	}
	c := with[0]
	if last := c.Events[len(c.Events)-1]; last.Type != EventRunEnd || c.CreateTask == nil || c.CreateTask.State != run.StateCompleted {
		t.Fatalf("the checkpoint rode with a write ending in %s (task written %v), want the final commit (carrying the create)", last.Type, c.CreateTask != nil)
	}
	cp, err := st.LoadCheckpoint(ctxT(t), task.ID)
	if err != nil || cp == nil || cp.Step != "final" {
		t.Fatalf("LoadCheckpoint after the run: %+v, %v; want the staged checkpoint", cp, err)
	}
}
