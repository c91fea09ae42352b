package runtime

import (
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// A delayed run is stored submitted, does not start before its delay, and
// starts on another replica when the one that took it died meanwhile.
func TestSendAfterSurvivesItsReplica(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) {
		opts := func(id string) Options {
			return Options{Store: shared, Agents: []*Agent{testAgent("s", streamer(2, nil))}, ReplicaID: id,
				LeaseTTL: 300 * time.Millisecond, SweepEvery: 50 * time.Millisecond, CancelGrace: 200 * time.Millisecond}
		}
		a := startRuntime(t, opts("A"))
		const delay = 1200 * time.Millisecond
		sent := time.Now()
		task, err := a.SendAfter(ctxT(t), SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, "later")}, delay)
		if err != nil || task.State != run.StateSubmitted {
			t.Fatalf("SendAfter = %+v, %v", task, err)
		}
		doomed, err := a.SendAfter(ctxT(t), SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, "canceled")}, delay)
		if err != nil {
			t.Fatal(err)
		}
		a.crash()
		b := startRuntime(t, opts("B"))
		if _, err := b.Cancel(ctxT(t), doomed.ID); err != nil { // recorded: A's lease holds it
			t.Fatal(err)
		}
		time.Sleep(delay / 2)
		if got, err := b.GetTask(ctxT(t), task.ID); err != nil || got.State != run.StateSubmitted {
			t.Fatalf("at half the delay: %v %v, want still submitted", got.State, err)
		}
		done := wait(t, b, task.ID)
		if done.State != run.StateCompleted {
			t.Fatalf("delayed run ended %s", done.State)
		}
		if took := time.Since(sent); took < delay {
			t.Fatalf("delayed run ended %v after its send, before its delay %v", took, delay)
		}
		if got := wait(t, b, doomed.ID); got.State != run.StateCanceled || got.Attempt != 0 {
			t.Fatalf("delayed run canceled on another replica: %s attempt %d; want canceled, never started", got.State, got.Attempt)
		}
		if _, err := b.SendAfter(ctxT(t), SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, "x")}, 0); !errdefs.IsValidation(err) {
			t.Fatalf("a zero delay: %v, want Validation", err)
		}
	})
}

// A running run is not deleted; rolled back, it is canceled and deleted
// with its transcript messages, and the next run of its context starts.
func TestRollbackRunDeletesIt(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) {
		started := make(chan string, 1)
		r := startRuntime(t, Options{Store: shared, Agents: []*Agent{testAgent("b", blocker(false, started)), testAgent("s", streamer(1, nil))}})
		first := send(t, r, "b", "first")
		<-started
		if err := r.DeleteRun(ctxT(t), first.ID); !errdefs.IsConflict(err) {
			t.Fatalf("delete a running run: %v, want Conflict", err)
		}
		if err := r.RollbackRun(ctxT(t), first.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := r.GetTask(ctxT(t), first.ID); !errdefs.IsNotFound(err) {
			t.Fatalf("rolled-back run: %v, want NotFound", err)
		}
		page, err := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: first.ContextID})
		if err != nil || len(page.Messages) != 0 {
			t.Fatalf("transcript after rollback = %d messages, %v", len(page.Messages), err)
		}
		sub, err := r.Send(ctxT(t), SendRequest{AgentID: "s", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "second")})
		if err != nil {
			t.Fatal(err)
		}
		if got := wait(t, r, sub.Task.ID); got.State != run.StateCompleted {
			t.Fatalf("next run ended %s", got.State)
		}
		if err := r.DeleteRun(ctxT(t), sub.Task.ID); err != nil {
			t.Fatalf("delete a finished run: %v", err)
		}
	})
}

// A delayed run canceled before its delay never starts; rolled back, it
// is gone.
func TestSendAfterCanceled(t *testing.T) {
	r := startRuntime(t, Options{Store: memstore.New(), Agents: []*Agent{testAgent("s", streamer(1, nil))},
		LeaseTTL: 300 * time.Millisecond, SweepEvery: 20 * time.Millisecond})
	msg := func(text string) SendRequest {
		return SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, text)}
	}
	task, err := r.SendAfter(ctxT(t), msg("never"), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := r.Cancel(ctxT(t), task.ID); err != nil || c.State != run.StateCanceled {
		t.Fatalf("cancel a delayed run: %s, %v; want canceled at once", c.State, err)
	}
	gone, err := r.SendAfter(ctxT(t), msg("gone"), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RollbackRun(ctxT(t), gone.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // past the delay, many sweeps
	if got, err := r.GetTask(ctxT(t), task.ID); err != nil || got.State != run.StateCanceled || got.Attempt != 0 {
		t.Fatalf("canceled delayed run after its delay: %s attempt %d, %v; want canceled, never started", got.State, got.Attempt, err)
	}
	if _, err := r.GetTask(ctxT(t), gone.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("rolled-back delayed run: %v, want NotFound", err)
	}
}
