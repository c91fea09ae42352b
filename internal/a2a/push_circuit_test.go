package a2a_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/a2a/pushtest"
)

// TestPushDeadWebhookCircuit: a webhook that answers 503 to everything
// gets the first update retried until push.retry_for, then given up;
// delivery goes on, each following update with one attempt (the circuit
// is open) and given up too. Once the webhook answers again, the update
// it takes closes the circuit: the next failure is retried again, and
// every update from the first taken on arrives, in order, up to the end.
func TestPushDeadWebhookCircuit(t *testing.T) {
	var mu sync.Mutex
	var seen []agenta2a.Delivery
	var rcv *pushtest.Receiver
	observe := func(d agenta2a.Delivery) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, d)
		switch given, taken := count(seen); {
		case taken == 0 && given == 4:
			rcv.Up("/dead") // the webhook comes back
		case taken == 1 && d.Err == nil:
			rcv.FailNextAt("/dead", pushtest.Fault{Status: 503}) // one failure after it closed
		}
	}
	e, r := newPushEnv(t, func(o *agenta2a.PushOptions) { o.RetryFor = 300 * time.Millisecond; o.Observe = observe })
	rcv = r
	rcv.Down("/dead")
	c := e.client(t, "echo", bindings[0])
	req := sendReq("stream 20 every 5ms")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: rcv.URL("/dead")}}
	id := taskOf(t, mustSend(t, c, req)).ID
	got := waitTerminal(t, rcv, "/dead", id)

	mu.Lock()
	defer mu.Unlock()
	first := seen[0]
	if first.Err == nil || first.Attempts < 2 {
		t.Fatalf("first update: %+v, want it retried, then given up", first)
	}
	for i, d := range seen[1:4] {
		if d.Err == nil || d.Attempts != 1 {
			t.Errorf("update %d while the webhook is down: %d attempts, err %v; want one attempt, given up", i+2, d.Attempts, d.Err)
		}
	}
	if d := seen[4]; d.Err != nil || d.Attempts != 1 {
		t.Errorf("first update once the webhook answers: %d attempts, err %v; want taken at once", d.Attempts, d.Err)
	}
	if d := seen[5]; d.Err != nil || d.Attempts != 2 {
		t.Errorf("the update after it, failing once: %d attempts, err %v; want retried (the circuit closed) and taken", d.Attempts, d.Err)
	}
	for _, d := range seen[4:] {
		if d.Err != nil {
			t.Errorf("update of seq %d given up after the webhook came back: %v", d.Seq, d.Err)
		}
	}
	want := replay(t, c, id, seen[3].Seq) // every update after the last given up
	if d := describeDeduped(got); !pushtest.InOrder(got) || !slices.Equal(d, want) {
		t.Errorf("delivered %v, want every update after seq %d in order: %v", d, seen[3].Seq, want)
	}
}

// count is how many deliveries were given up and taken.
func count(ds []agenta2a.Delivery) (given, taken int) {
	for _, d := range ds {
		if d.Err != nil {
			given++
		} else {
			taken++
		}
	}
	return given, taken
}
