package runtime

import (
	"context"
	"strconv"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// A volatile log shows a live event as soon as it is logged, before the
// store has it, and the store holds every shown event once the run ended.
func TestVolatileLogShowsLiveEventsBeforeTheyAreStored(t *testing.T) {
	st := &holdingStore{Store: memstore.New(), hold: make(chan struct{})}
	gate := make(chan struct{})
	r, err := New(Options{
		Store: volatileStore{st}, Agents: []*Agent{testAgent("s", streamer(3, gate))},
		CancelGrace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(ctxT(t)) })
	task := send(t, r, "s", "go")
	stream, err := r.OpenStream(ctxT(t), task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	// Two deltas reach the reader while the flusher's writes are held (and
	// the run, waiting for its third token, cannot carry them in its final
	// commit yet).
	gate <- struct{}{}
	gate <- struct{}{}
	seen := readUntil(t, stream, 2)
	page, err := st.ReadEvents(ctxT(t), task.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if last := seen[len(seen)-1]; page.LastSeq >= last.Seq {
		t.Fatalf("store holds seq %d while its writes are held; the delta (seq %d) was shown only once stored", page.LastSeq, last.Seq)
	}

	close(st.hold)
	gate <- struct{}{}
	wait(t, r, task.ID)
	all := readAll(t, r, task.ID, 0, false)
	page, err = st.ReadEvents(ctxT(t), task.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != len(all) {
		t.Fatalf("store has %d events, the stream delivered %d", len(page.Events), len(all))
	}
	for i := range all {
		if string(page.Events[i].Data) != string(all[i].Data) {
			t.Fatalf("event %d differs:\nstored   %s\nstreamed %s", i+1, page.Events[i].Data, all[i].Data)
		}
	}
	checkDense(t, all, 0)
}

// holdingStore holds every write of live events alone (the flusher's)
// until hold is closed.
type holdingStore struct {
	store.Store
	hold chan struct{}
}

func (h *holdingStore) Apply(ctx context.Context, c store.Change) error {
	if c.CreateTask == nil && c.UpdateTask == nil && len(c.Messages) == 0 && len(c.Events) > 0 {
		select {
		case <-h.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return h.Store.Apply(ctx, c)
}

// readUntil reads from st until it has delivered n delta events.
func readUntil(t *testing.T, st *Stream, n int) []run.Event {
	t.Helper()
	var out []run.Event
	deltas := 0
	for deltas < n {
		evs, err := st.Next(ctxT(t), 1, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == EventDelta {
				deltas++
			}
		}
		out = append(out, evs...)
	}
	return out
}

// With a volatile store, a checkpoint is written only when another attempt
// may go on from it: a completed run leaves none, a run parked for input or
// handed over by a drain leaves its latest one.
func TestVolatileCheckpointsWrittenWhenAnotherAttemptNeedsThem(t *testing.T) {
	st := memstore.New()
	started := make(chan string, 1)
	checkpointed := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		for i := 1; i <= 2; i++ {
			if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: "step " + strconv.Itoa(i), Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
				return b, err
			}
		}
		if msgs := b.Channel(engine.MainChannel); msgs[len(msgs)-1].Text() == "done" {
			return b, nil
		}
		started <- run.ID
		intr := <-h.Interrupts() // the drain
		return b, engine.Interrupted(intr)
	})
	r, err := New(Options{
		Store: volatileStore{st}, Agents: []*Agent{testAgent("c", checkpointed), testAgent("a", asker{})},
		CancelGrace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(ctxT(t)) })
	checkpoints := func(id string) []engine.Checkpoint {
		t.Helper()
		cps, err := st.ListCheckpoints(ctxT(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return cps
	}

	done := send(t, r, "c", "done")
	if got := wait(t, r, done.ID); got.State != run.StateCompleted {
		t.Fatalf("run ended %s, want completed", got.State)
	}
	if cps := checkpoints(done.ID); len(cps) != 0 {
		t.Fatalf("a completed run left %d checkpoints in a volatile store, want none", len(cps))
	}

	parked := send(t, r, "a", "hi")
	if got := wait(t, r, parked.ID); got.State != run.StateInputRequired {
		t.Fatalf("run ended %s, want input-required", got.State)
	}
	if cps := checkpoints(parked.ID); len(cps) != 1 || cps[0].Step != "ask" || cps[0].Attributes[store.AttrAttempt] != "1" || cps[0].OriginalStartedAt.IsZero() {
		t.Fatalf("a parked run left %d checkpoints (%+v), want its one, stamped with attempt 1 and the start", len(cps), cps)
	}

	drained := send(t, r, "c", "wait")
	<-started
	if err := r.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetTask(ctxT(t), drained.ID); got.State != run.StateWorking {
		t.Fatalf("drained run is %s, want working", got.State)
	}
	if cps := checkpoints(drained.ID); len(cps) != 1 || cps[0].Step != "step 2" {
		t.Fatalf("a drained run left %d checkpoints (%+v), want its latest (step 2)", len(cps), cps)
	}
}
