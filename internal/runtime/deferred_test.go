package runtime

import (
	"context"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// slowReplica is a replica whose flusher window is an hour: a deferred
// create waits for the run's own writes.
func slowReplica(t *testing.T, st store.Store, eng engine.Engine) *Runtime {
	t.Helper()
	return startRuntime(t, Options{Store: st, Agents: []*Agent{testAgent("c", eng)}, ReplicaID: "A", FlushWindow: time.Hour})
}

// A blocking send in a new context whose run ends at once costs the store
// one write: the final commit carries the create, the user message, every
// event and the answer. The run leaves no lease behind, and the caller is
// answered with the task as stored.
func TestShortBlockingSendIsOneWrite(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) {
		st := &applies{Store: shared}
		r := slowReplica(t, st, burst(1)) // a delta, then the answer
		ctx := ctxT(t)
		sub, err := r.Send(ctx, SendRequest{AgentID: "c", Message: model.NewText(model.RoleUser, "hi"), Await: AwaitEnd})
		if err != nil {
			t.Fatal(err)
		}
		done, msgs, err := r.WaitView(ctx, sub.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if done.State != run.StateCompleted || done.Version != 2 || len(msgs) != 2 {
			t.Fatalf("answered %s at version %d with %d messages, want completed at version 2 with 2", done.State, done.Version, len(msgs))
		}
		if got, err := st.GetTask(ctx, done.ID); err != nil || !got.UpdatedAt.Equal(done.UpdatedAt) || got.Version != done.Version {
			t.Fatalf("GetTask = %+v, %v; want the task the caller was answered with", got, err)
		}
		st.mu.Lock()
		changes := st.changes
		st.mu.Unlock()
		if len(changes) != 1 {
			t.Fatalf("%d store writes, want 1", len(changes))
		}
		c := changes[0]
		if c.CreateTask == nil || c.Lease != nil || c.Idempotency == nil || len(c.Messages) != 2 || c.Events[len(c.Events)-1].Type != EventRunEnd {
			t.Fatalf("the write: create %v, lease claim %v, key %v, %d messages, last event %s; want the whole run, no lease",
				c.CreateTask != nil, c.Lease != nil, c.Idempotency != nil, len(c.Messages), c.Events[len(c.Events)-1].Type)
		}
		leases, err := st.ExpiredLeases(ctx, time.Now().Add(time.Hour), 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leases {
			if l.RunID == done.ID {
				t.Fatalf("the run left lease %+v", l)
			}
		}
	})
}

// Only a new context's task is deferred: one in a context the client
// named (another request could name it too), and one whose caller does
// not block on it, exist when Send returns.
func TestSendsThatAreNotDeferred(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	r := slowReplica(t, &applies{Store: memstore.New()}, streamer(1, gate))
	ctx := ctxT(t)
	for name, req := range map[string]SendRequest{
		"client context": {AgentID: "c", ContextID: "mine", Message: model.NewText(model.RoleUser, "hi"), Await: AwaitEnd},
		"not blocking":   {AgentID: "c", Message: model.NewText(model.RoleUser, "hi")},
	} {
		sub, err := r.Send(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.st.GetTask(ctx, sub.Task.ID); err != nil {
			t.Errorf("%s: GetTask right after Send: %v, want the task", name, err)
		}
	}
	sub, err := r.Send(ctx, SendRequest{AgentID: "c", Message: model.NewText(model.RoleUser, "hi"), Await: AwaitEnd})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.GetTask(ctx, sub.Task.ID); !errdefs.IsNotFound(err) {
		t.Errorf("deferred: GetTask right after Send: %v, want not found until the run's first write", err)
	}
}

// A deferred run that outlives the window is written by then, holds its
// lease, and is resumed by another replica when its own dies.
func TestKilledReplicaDeferredRunResumesElsewhere(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) { killedReplicaRunResumes(t, shared, AwaitEnd) })
}

// While the store is known to be unreachable a blocking send is not
// deferred: it is refused as before, rather than run with nowhere to be
// written. Here the store answers again, and the task exists as Send
// returns.
func TestNoDeferredCreateWhileTheStoreIsInTrouble(t *testing.T) {
	r := slowReplica(t, &applies{Store: memstore.New()}, burst(1))
	r.noteStoreError(errdefs.NotAvailablef("the database is restarting"))
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "c", Message: model.NewText(model.RoleUser, "hi"), Await: AwaitEnd})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.GetTask(ctxT(t), sub.Task.ID); err != nil {
		t.Fatalf("GetTask right after Send: %v, want the task (not deferred while the store was in trouble)", err)
	}
}

// A stream's create rides with the run's first live event, written at
// once: the stream answers (Durable) only then, so that a client never
// holds the id of a run it cannot look up, and it reads every event.
func TestDeferredStreamAnswersOnceStored(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) {
		gate := make(chan struct{})
		eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
			select {
			case <-gate:
			case <-ctx.Done():
				return b, ctx.Err()
			}
			if err := h.Publish(ctx, engine.Token{Actor: "c", Text: "first"}); err != nil {
				return b, err
			}
			b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "first"))
			return b, nil
		})
		r := slowReplica(t, shared, eng) // the window (an hour) never writes it
		ctx := ctxT(t)
		sub, err := r.Send(ctx, SendRequest{AgentID: "c", Message: model.NewText(model.RoleUser, "hi"), Await: AwaitStream})
		if err != nil {
			t.Fatal(err)
		}
		early, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err = sub.Durable(early)
		cancel()
		if err == nil {
			t.Fatal("the stream's task was stored before the run wrote anything")
		}
		close(gate)
		if err := sub.Durable(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := shared.GetTask(ctx, sub.Task.ID); err != nil {
			t.Fatalf("GetTask once the stream may answer: %v", err)
		}
		evs := readAll(t, r, sub.Task.ID, 0, true)
		checkDense(t, evs, 0)
		if evs[0].Type != EventRunStart || evs[len(evs)-1].Type != EventRunEnd {
			t.Fatalf("stream %v, want run.start … run.end", types(evs))
		}
	})
}

// A deferred run that outlives its lease many times over keeps it: the
// write that carried its create (the flusher's, one window in) claimed
// it, the runtime renews it from then on — another replica's sweep finds
// nothing to take over — and the run gives it up when it ends.
func TestDeferredRunKeepsItsLease(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) {
		gate := make(chan struct{})
		a := startRuntime(t, Options{Store: shared, Agents: []*Agent{testAgent("c", streamer(1, gate))}, ReplicaID: "A",
			LeaseTTL: 300 * time.Millisecond, SweepEvery: 50 * time.Millisecond, FlushWindow: 50 * time.Millisecond})
		replica(t, shared, "B", streamer(1, gate)) // sweeps every 50ms
		ctx := ctxT(t)
		sub, err := a.Send(ctx, SendRequest{AgentID: "c", Message: model.NewText(model.RoleUser, "hi"), Await: AwaitEnd})
		if err != nil {
			t.Fatal(err)
		}
		if sub.create == nil {
			t.Fatal("the send's create was not deferred")
		}
		time.Sleep(2 * time.Second) // several lease periods, many sweeps
		close(gate)
		done := wait(t, a, sub.Task.ID)
		if done.State != run.StateCompleted || done.Attempt != 1 {
			t.Fatalf("the run ended %s in attempt %d, want completed in the first: its lease was not kept", done.State, done.Attempt)
		}
		leases, err := shared.ExpiredLeases(ctx, time.Now().Add(time.Hour), 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leases {
			if l.RunID == done.ID {
				t.Fatalf("the run left lease %+v", l)
			}
		}
	})
}

// A task id the client chose may be taken — another request can name it
// — so its create is written before Send returns however the caller
// awaits the run, and a taken id is refused then (Conflict), rather than
// deferred and lost at the run's first write with the caller left
// waiting.
func TestClientChosenRunIDIsNotDeferred(t *testing.T) {
	r := slowReplica(t, &applies{Store: memstore.New()}, burst(1))
	ctx := ctxT(t)
	first, err := r.Send(ctx, SendRequest{AgentID: "c", RunID: "run-1", Message: model.NewText(model.RoleUser, "hi")})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, r, first.Task.ID)
	for _, await := range []Await{AwaitNone, AwaitEnd, AwaitStream} {
		sub, err := r.Send(ctx, SendRequest{AgentID: "c", RunID: "run-1", Message: model.NewText(model.RoleUser, "again"), Await: await})
		if !errdefs.IsConflict(err) {
			t.Fatalf("await %d: a second task with a taken id: %v (submission %+v), want a conflict", await, err, sub.Task)
		}
	}
}
