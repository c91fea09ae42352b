package runtime

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// cutOff is a replica's view of a shared store it cannot reach while cut:
// writes and lease renewals fail as NotAvailable (reads pass: the tests
// need only the writes to fail).
type cutOff struct{ killable }

func (c *cutOff) RenewLeases(ctx context.Context, ls []store.Lease, ttl time.Duration) ([]store.RenewedLease, error) {
	if err := c.err(); err != nil {
		return nil, err
	}
	return c.Store.RenewLeases(ctx, ls, ttl)
}

// fixedProbe answers every probe with executes, or with err.
type fixedProbe struct {
	executes bool
	err      error
}

func (p fixedProbe) Executes(context.Context, string, string) (bool, error) { return p.executes, p.err }

// waitFor polls cond until it holds or the test's time is up.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, testTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOutageHoldsTheEngineBack: while the store takes no write, a run's
// events wait in memory up to MaxBacklog, then the engine's Publish blocks
// rather than drop one; when the store is back every event is written and
// the run completes in its first attempt.
func TestOutageHoldsTheEngineBack(t *testing.T) {
	const tokens, max = 40, 5
	st := &cutOff{killable{Store: memstore.New()}}
	gate := make(chan struct{})
	r := startRuntime(t, Options{Store: st, Agents: []*Agent{testAgent("s", streamer(tokens, gate))}, MaxBacklog: max})
	task := send(t, r, "s", "go")
	x := r.executing(task.ID)
	waitFor(t, "the run executes", func() bool { x = r.executing(task.ID); return x != nil })
	st.dead.Store(true)
	close(gate)
	waitFor(t, "the backlog reaches its cap", func() bool { return x.log.Backlog() >= max })
	time.Sleep(100 * time.Millisecond) // the engine would publish all 40 in far less
	if n := x.log.Backlog(); n > max+1 {
		t.Fatalf("%d events wait for the store, want at most the cap %d (+1 in flight)", n, max)
	}
	st.dead.Store(false)
	final := wait(t, r, task.ID)
	if final.State != run.StateCompleted || final.Attempt != 1 {
		t.Fatalf("run %s in attempt %d, want completed in attempt 1", final.State, final.Attempt)
	}
	evs := readAll(t, r, task.ID, 0, true)
	checkDense(t, evs, 0)
	if got := countType(evs, EventDelta); got != tokens {
		t.Fatalf("%d deltas stored, want %d", got, tokens)
	}
}

// TestOwnerGivesUpBeyondTheBound: a replica that cannot reach the store
// for longer than the outage bound after its lease expired stops the
// attempt and writes nothing more, even once the store is back and though
// nobody took its lease: the events it produced meanwhile are dropped.
func TestOwnerGivesUpBeyondTheBound(t *testing.T) {
	st := &cutOff{killable{Store: memstore.New()}}
	gate := make(chan struct{}, 100)
	r := startRuntime(t, Options{Store: st, Agents: []*Agent{testAgent("s", streamer(100, gate))},
		LeaseTTL: 200 * time.Millisecond, OutageBound: 300 * time.Millisecond, SweepEvery: time.Hour})
	task := send(t, r, "s", "go")
	waitFor(t, "the run executes", func() bool { return r.Executes(task.ID) })
	gate <- struct{}{}
	waitFor(t, "the first token is stored", func() bool { return r.logEnd(ctxT(t), task.ID) > 2 })
	before := r.logEnd(ctxT(t), task.ID)
	st.dead.Store(true)
	for range 10 {
		gate <- struct{}{} // tokens the store cannot take now
	}
	began := time.Now()
	waitFor(t, "the owner gives the run up", func() bool { return !r.Executes(task.ID) })
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Fatalf("given up %v after the store went away, before the bound", took)
	}
	st.dead.Store(false)
	time.Sleep(300 * time.Millisecond) // room for a write that must not come
	if after := r.logEnd(ctxT(t), task.ID); after != before {
		t.Fatalf("the log grew from seq %d to %d after the owner gave the run up", before, after)
	}
	got, err := st.GetTask(ctxT(t), task.ID)
	if err != nil || got.State != run.StateWorking {
		t.Fatalf("task %v, %v: want it left working for another replica", got.State, err)
	}
}

// TestSweepAsksTheOwnerFirst: replica B finds the expired lease of a run
// replica A executes while A is cut off from the store. An owner that
// answers that it still executes the run keeps it until the lease has
// been expired for the outage bound; one that gives no answer loses it at
// once.
func TestSweepAsksTheOwnerFirst(t *testing.T) {
	const lease, bound = 200 * time.Millisecond, 1500 * time.Millisecond
	for _, tc := range []struct {
		name   string
		probe  fixedProbe
		before bool // taken over before the bound passed
	}{
		{"owner answers", fixedProbe{executes: true}, false},
		{"owner silent", fixedProbe{err: errdefs.NotAvailablef("no answer")}, true},
		{"owner no longer executes it", fixedProbe{executes: false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared := memstore.New()
			cut := &cutOff{killable{Store: shared}}
			gate := make(chan struct{}) // closed at the end: the run then completes, and the drains are quick
			opts := func(st store.Store, name string, probe OwnerProbe) Options {
				return Options{Store: st, ReplicaID: name, Agents: []*Agent{testAgent("b", streamer(3, gate))},
					LeaseTTL: lease, OutageBound: bound, SweepEvery: 20 * time.Millisecond, Owners: probe}
			}
			a := startRuntime(t, opts(cut, "A", nil))
			task := send(t, a, "b", "go")
			waitFor(t, "the run executes on A", func() bool { return a.Executes(task.ID) })
			cut.dead.Store(true)
			t.Cleanup(func() { cut.dead.Store(false) }) // A's drain, before its shutdown
			began := time.Now()
			b := startRuntime(t, opts(shared, "B", tc.probe))
			waitFor(t, "B takes the run over", func() bool { return b.Executes(task.ID) })
			took := time.Since(began)
			t.Cleanup(func() { close(gate) })
			if before := took < bound; before != tc.before {
				t.Fatalf("B took the run over %v after A was cut off (bound %v), want before the bound: %v", took, bound, tc.before)
			}
		})
	}
}

func countType(evs []run.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// silentProbe never answers before its context ends, and counts the
// questions.
type silentProbe struct{ asked *atomic.Int32 }

func (p silentProbe) Executes(ctx context.Context, _, _ string) (bool, error) {
	p.asked.Add(1)
	<-ctx.Done()
	return false, ctx.Err()
}

// TestSilentOwnerIsAskedOnce: the runs of an owner that does not answer
// (frozen) are all taken over in one sweep round, after one unanswered
// question rather than one per run.
func TestSilentOwnerIsAskedOnce(t *testing.T) {
	const lease = 400 * time.Millisecond
	shared := memstore.New()
	cut := &cutOff{killable{Store: shared}}
	gate := make(chan struct{})
	var asked atomic.Int32
	opts := func(st store.Store, name string, probe OwnerProbe) Options {
		return Options{Store: st, ReplicaID: name, Agents: []*Agent{testAgent("b", streamer(3, gate))},
			LeaseTTL: lease, OutageBound: time.Minute, SweepEvery: 20 * time.Millisecond, Owners: probe}
	}
	a := startRuntime(t, opts(cut, "A", nil))
	var ids []string
	for i := range 3 {
		ids = append(ids, send(t, a, "b", "go "+strconv.Itoa(i)).ID)
	}
	waitFor(t, "the runs execute on A", func() bool { return a.Executes(ids[0]) && a.Executes(ids[1]) && a.Executes(ids[2]) })
	time.Sleep(lease) // a renewal round: the three leases expire together
	cut.dead.Store(true)
	t.Cleanup(func() { cut.dead.Store(false) })
	b := startRuntime(t, opts(shared, "B", silentProbe{&asked}))
	waitFor(t, "B takes the runs over", func() bool { return b.Executes(ids[0]) && b.Executes(ids[1]) && b.Executes(ids[2]) })
	t.Cleanup(func() { close(gate) })
	if n := asked.Load(); n != 1 {
		t.Fatalf("the silent owner was asked %d times, want once", n)
	}
}
