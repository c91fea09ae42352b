package runtime

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/pgstore"
)

// sharedStores runs a multi-replica test on a store the replicas share:
// the in-memory store, and PostgreSQL (pgtest: TEST_DATABASE_URL or a
// throwaway cluster; never skipped under REQUIRE_DB=1).
func sharedStores(t *testing.T, test func(*testing.T, store.Store)) {
	t.Run("memstore", func(t *testing.T) { test(t, shared{memstore.New()}) })
	t.Run("pgstore", func(t *testing.T) {
		st, err := pgstore.Open(t.Context(), pgtest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		test(t, st)
	})
}

// killable is a replica's view of a shared store that can die: after kill
// every write fails, as if the process was gone.
type killable struct {
	store.Store
	dead atomic.Bool
}

func (k *killable) err() error {
	if k.dead.Load() {
		return errdefs.NotAvailablef("replica killed")
	}
	return nil
}

func (k *killable) Apply(ctx context.Context, c store.Change) error {
	if err := k.err(); err != nil {
		return err
	}
	return k.Store.Apply(ctx, c)
}

func (k *killable) SaveCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	if err := k.err(); err != nil {
		return err
	}
	return k.Store.SaveCheckpoint(ctx, cp)
}

func (k *killable) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if err := k.err(); err != nil {
		return store.Lease{}, err
	}
	return k.Store.RenewLease(ctx, l, ttl)
}

func (k *killable) ReleaseLease(ctx context.Context, l store.Lease) error {
	if err := k.err(); err != nil {
		return err
	}
	return k.Store.ReleaseLease(ctx, l)
}

// crash stops a runtime without any of the courtesies of Shutdown.
func (r *Runtime) crash() {
	r.stop()
	r.wg.Wait()
}

// counter emits tokens 1..n, one per step, checkpointing after each; it
// resumes after the last checkpointed step. started receives each attempt's
// first step.
type counter struct {
	n       int
	step    chan struct{} // one receive per token; nil = free running
	started chan int
}

func (counter) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true}
}

func (c counter) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	from := 1
	if cp := run.ResumeFrom; cp != nil {
		b = engine.RestoreBoard(cp.Board)
		from = cp.Iteration + 1
	}
	if c.started != nil {
		c.started <- from
	}
	for i := from; i <= c.n; i++ {
		if c.step != nil {
			select {
			case <-c.step:
			case <-ctx.Done():
				return b, ctx.Err()
			case intr := <-h.Interrupts():
				return b, engine.Interrupted(intr)
			}
		}
		if err := h.Publish(ctx, engine.Token{Actor: "counter", Text: "tok" + strconv.Itoa(i) + " "}); err != nil {
			return b, err
		}
		if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: fmt.Sprint(i), Iteration: i, Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
			return b, err
		}
	}
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "counted to "+strconv.Itoa(c.n)))
	return b, nil
}

func replica(t *testing.T, st store.Store, name string, eng engine.Engine) *Runtime {
	t.Helper()
	return replicaLeasing(t, st, name, eng, 300*time.Millisecond)
}

// replicaLeasing is replica with leases of ttl.
func replicaLeasing(t *testing.T, st store.Store, name string, eng engine.Engine, ttl time.Duration) *Runtime {
	t.Helper()
	r, err := New(Options{
		Store: st, Agents: []*Agent{testAgent("c", eng)}, ReplicaID: name,
		LeaseTTL: ttl, SweepEvery: 50 * time.Millisecond, CancelGrace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = r.Shutdown(ctx)
	})
	return r
}

// A replica dies mid-run; another claims the expired lease, resumes from the
// last checkpoint in attempt 2, and a reader on the survivor gets every event
// exactly once, in order, through the end.
func TestKilledReplicaRunResumesElsewhere(t *testing.T) {
	sharedStores(t, testKilledReplicaRunResumesElsewhere)
}

func testKilledReplicaRunResumesElsewhere(t *testing.T, shared store.Store) {
	killedReplicaRunResumes(t, shared, AwaitNone)
}

// killedReplicaRunResumes is the test above, for a send awaited as await says.
func killedReplicaRunResumes(t *testing.T, shared store.Store, await Await) {
	step := make(chan struct{})
	started := make(chan int, 4)
	eng := counter{n: 10, step: step, started: started}
	ka := &killable{Store: shared}
	// A's lease outlives a loaded machine's scheduling delays: were it to
	// lapse before the kill, B would take the run over while the test still
	// steps A (a full suite under the race detector once did).
	a := replicaLeasing(t, ka, "A", eng, 1500*time.Millisecond)
	b := replica(t, shared, "B", eng)

	sub, err := a.Send(ctxT(t), SendRequest{AgentID: "c", Message: model.NewText(model.RoleUser, "count"), Await: await})
	if err != nil {
		t.Fatal(err)
	}
	task := sub.Task
	if from := <-started; from != 1 {
		t.Fatalf("first attempt started at %d", from)
	}
	for i := 0; i < 4; i++ {
		step <- struct{}{}
	}
	// A reader on B, following the run from another replica.
	st, err := b.OpenStream(ctxT(t), task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []run.Event
	deadline := time.Now().Add(testTimeout)
	for len(got) == 0 || got[len(got)-1].Type != EventDelta || deltaCount(got) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("B saw %d of A's 4 deltas within %v: %v", deltaCount(got), testTimeout, types(got))
		}
		evs, err := st.Next(ctxT(t), 100, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs...)
	}
	ka.dead.Store(true)
	a.crash()

	var from int
	select {
	case from = <-started: // B resumed the run
	case <-time.After(testTimeout):
		t.Fatalf("B did not resume the run within %v", testTimeout)
	}
	if from < 2 {
		t.Fatalf("recovery restarted at step %d; want after the last checkpoint", from)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case step <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	for got[len(got)-1].Type != EventRunEnd {
		if time.Now().After(deadline.Add(testTimeout)) {
			t.Fatalf("no run.end on B within %v: %v", testTimeout, types(got))
		}
		evs, err := st.Next(ctxT(t), 100, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs...)
	}
	checkDense(t, got, 0)
	done := wait(t, b, task.ID)
	if done.State != run.StateCompleted || done.Attempt != 2 {
		t.Fatalf("state %s attempt %d, want completed in attempt 2", done.State, done.Attempt)
	}
	var starts []string
	for _, ev := range got {
		if ev.Type == EventRunStart {
			starts = append(starts, string(ev.Data))
		}
	}
	if len(starts) != 2 {
		t.Fatalf("want two attempts framed by run.start, got %d", len(starts))
	}
}

func deltaCount(evs []run.Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == EventDelta {
			n++
		}
	}
	return n
}

// A cancel arriving at a replica that does not execute the run reaches the
// owner through the store.
func TestCancelAcrossReplicas(t *testing.T) { sharedStores(t, testCancelAcrossReplicas) }

func testCancelAcrossReplicas(t *testing.T, shared store.Store) {
	started := make(chan string, 1)
	a := replica(t, shared, "A", blocker(false, started))
	b := replica(t, shared, "B", blocker(false, nil))
	task := send(t, a, "c", "x")
	<-started
	got, err := b.Cancel(ctxT(t), task.ID)
	if err != nil || !got.CancelRequested {
		t.Fatalf("cancel from B: %+v %v, want the request recorded", got, err)
	}
	if done := wait(t, a, task.ID); done.State != run.StateCanceled {
		t.Fatalf("state %s, want canceled by the owner", done.State)
	}
}

// A drain hands running work over without waiting for the lease to expire.
func TestDrainHandsOver(t *testing.T) { sharedStores(t, testDrainHandsOver) }

func testDrainHandsOver(t *testing.T, shared store.Store) {
	started := make(chan int, 4)
	eng := counter{n: 3, step: make(chan struct{}), started: started}
	a := replica(t, shared, "A", eng)
	task := send(t, a, "c", "x")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = a.Shutdown(ctx)
	free := counter{n: 3, started: started}
	b, err := New(Options{Store: shared, Agents: []*Agent{testAgent("c", free)}, ReplicaID: "B", LeaseTTL: time.Minute, SweepEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Shutdown(context.Background()) }()
	<-started
	if done := wait(t, b, task.ID); done.State != run.StateCompleted {
		t.Fatalf("state %s, want completed on B well before A's one-minute lease would expire", done.State)
	}
}
