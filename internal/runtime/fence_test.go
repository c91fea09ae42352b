package runtime

import (
	"testing"
	"time"

	"agentd/internal/store"
)

// A replica whose lease was taken over (it was cut off, another replica
// claimed the run) cannot add to the run's log any more: its writes are
// fenced by the lease it held. Before fencing it went on writing until
// its next renewal round noticed, its events landing in a log the new
// owner was about to continue.
func TestLostLeaseFencesTheLog(t *testing.T) {
	sharedStores(t, func(t *testing.T, shared store.Store) {
		gate := make(chan struct{})
		a := startRuntime(t, Options{
			Store: shared, Agents: []*Agent{testAgent("c", streamer(1000, gate))}, ReplicaID: "A",
			LeaseTTL: 10 * time.Second, // no renewal round during the test
		})
		task := send(t, a, "c", "x")
		tick := func(n int) {
			for range n {
				gate <- struct{}{}
			}
		}
		tick(5)
		until(t, func() bool { return storedLast(t, shared, task.ID) >= 5 })

		// Another replica takes the run over: A's lease (generation 1)
		// expires, B claims it.
		if _, err := shared.RenewLease(ctxT(t), store.Lease{RunID: task.ID, Owner: "A", Generation: 1}, time.Nanosecond); err != nil {
			t.Fatalf("expire A's lease: %v", err)
		}
		time.Sleep(2 * time.Millisecond) // past the nanosecond
		if _, err := shared.AcquireLease(ctxT(t), task.ID, "B", time.Minute); err != nil {
			t.Fatalf("B's takeover: %v", err)
		}
		before := storedLast(t, shared, task.ID)
		// A goes on streaming; none of it may reach the log.
		for i := 0; i < 20; i++ {
			select {
			case gate <- struct{}{}:
			case <-time.After(time.Second):
				i = 20 // A stopped taking tokens: it gave the run up
			}
		}
		time.Sleep(50 * time.Millisecond) // a few flush windows
		if after := storedLast(t, shared, task.ID); after != before {
			t.Fatalf("A wrote seqs %d..%d after losing the run's lease", before+1, after)
		}
	})
}

func storedLast(t *testing.T, st store.Store, runID string) int64 {
	t.Helper()
	page, err := st.ReadEvents(ctxT(t), runID, 1<<62, 1)
	if err != nil {
		t.Fatal(err)
	}
	return page.LastSeq
}
