package runtime

import (
	"testing"
	"time"

	"agentd/internal/store/memstore"
)

// ReadEvents is never behind a stream: a volatile log shows a delta to
// streams before the flusher stores it, and a face that takes ReadEvents'
// LastSeq as "live from here" (A2A's SubscribeToTask without a cursor, a
// retried streaming send) and the artifacts assembled from the stored
// events must reflect it, or the updates that follow the snapshot repeat
// what an earlier stream delivered (the remote engine then forwarded a
// peer's tokens twice after re-attaching).
func TestReadEventsNotBehindAVolatileStream(t *testing.T) {
	st := memstore.New()
	gate := make(chan struct{})
	// A window far beyond the test: after its first write the flusher
	// leaves the second delta pending.
	r := startRuntime(t, Options{Store: st, Agents: []*Agent{testAgent("s", streamer(3, gate))}, FlushWindow: time.Hour})
	t.Cleanup(func() { close(gate) }) // before the shutdown: a failed check leaves no run waiting
	task := send(t, r, "s", "go")
	stream, err := r.OpenStream(ctxT(t), task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	gate <- struct{}{}
	first := readUntil(t, stream, 1)
	deadline := time.Now().Add(testTimeout)
	for {
		page, err := st.ReadEvents(ctxT(t), task.ID, 1<<62, 1)
		if err != nil {
			t.Fatal(err)
		}
		if page.LastSeq >= first[len(first)-1].Seq {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first delta was never stored")
		}
		time.Sleep(5 * time.Millisecond)
	}
	gate <- struct{}{}
	seen := readUntil(t, stream, 1)
	last := seen[len(seen)-1].Seq
	if page, err := st.ReadEvents(ctxT(t), task.ID, 1<<62, 1); err != nil || page.LastSeq >= last {
		t.Fatalf("store at seq %d (%v) with the second delta (seq %d) shown: the case is not set up", page.LastSeq, err, last)
	}

	page, err := r.ReadEvents(ctxT(t), task.ID, 1<<62, 1)
	if err != nil {
		t.Fatal(err)
	}
	if page.LastSeq < last {
		t.Fatalf("ReadEvents ends at seq %d; a stream was shown seq %d", page.LastSeq, last)
	}
	page, err = r.ReadEvents(ctxT(t), task.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	streamed := append(first, seen...)
	for i, ev := range streamed {
		if i >= len(page.Events) || string(page.Events[i].Data) != string(ev.Data) {
			t.Fatalf("event %d: stored events %d, streamed %s", i+1, len(page.Events), ev.Data)
		}
	}

	gate <- struct{}{}
	wait(t, r, task.ID)
}
