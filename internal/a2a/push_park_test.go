package a2a_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/a2a/pushtest"
	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/pgstore"
)

// TestPushParksWhileTaskWaits: a webhook of a task that waits for input
// gets every update up to input-required, then its delivery parks — no
// replica delivers it (no goroutine, no claim), the store holds it parked
// at the task's version — and stays parked over many claim sweeps; each
// answer wakes it, and in the end the webhook has every update of the
// task, in order, none lost. On memstore and PostgreSQL.
func TestPushParksWhileTaskWaits(t *testing.T) {
	for _, s := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memstore", func(*testing.T) store.Store { return memstore.New() }},
		{"postgres", func(t *testing.T) store.Store {
			st, err := pgstore.Open(context.Background(), pgtest.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	} {
		t.Run(s.name, func(t *testing.T) { testPushParks(t, s.open(t)) })
	}
}

func testPushParks(t *testing.T, st store.Store) {
	e, rcv := newPushEnvOn(t, st)
	c := e.client(t, "conformance", bindings[0])
	req := sendReq("tck-multi-turn")
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{ID: "hook", URL: rcv.URL("/park")}}
	task := taskOf(t, mustSend(t, c, req))
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("tck-multi-turn: %s, want input-required", task.Status.State)
	}
	// What streams carry: the first turn's updates, then each answer's
	// stream.
	want := replay(t, c, task.ID, 0)
	final := task.Status.State
	for _, answer := range []string{"one", "I am done"} {
		waitParked(t, e, string(task.ID), "hook")
		// Parked means delivered: the webhook has every update so far.
		if got := describeDeduped(at(rcv.Notifications(), "/park")); !slices.Equal(got, want) {
			t.Fatalf("parked with the webhook holding:\n%s\nwant every update so far:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// Many claim sweeps (every 50 ms) later it is still parked.
		time.Sleep(300 * time.Millisecond)
		if n := e.a2a.ActivePushDeliveries(); n != 0 {
			t.Fatalf("%d deliveries active while the task waits, want the parked one not taken up", n)
		}
		m := textMessage(answer)
		m.TaskID = task.ID
		for _, ev := range collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: m})) {
			if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
				final = st.Status.State
			}
			if _, ok := ev.(*a2a.Task); !ok {
				want = append(want, describe(ev))
			}
		}
	}
	if final != a2a.TaskStateCompleted {
		t.Fatalf("after done: %s, want completed", final)
	}
	got := waitTerminal(t, rcv, "/park", task.ID)
	if !pushtest.InOrder(got) {
		t.Errorf("updates out of order: %v", seqsOf(got))
	}
	if d := describeDeduped(got); !slices.Equal(d, want) {
		t.Errorf("delivered:\n%s\nwant every update of the task:\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
}

// waitParked waits until config id of task is stored parked at the task's
// current version and no delivery runs on this replica.
func waitParked(t *testing.T, e *env, task, id string) {
	t.Helper()
	ctx := ctxT(t)
	var c run.PushConfig
	var cur run.Task
	for {
		var err error
		if cur, err = e.rt.GetTask(ctx, task); err != nil {
			t.Fatal(err)
		}
		if c, err = e.st.GetPushConfig(ctx, task, id); err != nil {
			t.Fatal(err)
		}
		if c.ParkedVersion == cur.Version && e.a2a.ActivePushDeliveries() == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("config %s: parked at %d, task at version %d (%s), %d deliveries active: want it parked, none active",
				id, c.ParkedVersion, cur.Version, cur.State, e.a2a.ActivePushDeliveries())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
