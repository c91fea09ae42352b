package event_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentd/internal/event"
)

func TestDropPoliciesKeepTheRightEnvelopes(t *testing.T) {
	cases := []struct {
		name   string
		policy event.Overflow
		want   []string
	}{
		{"drop oldest", event.OverflowDropOldest, []string{"3", "4", "5"}},
		{"drop newest", event.OverflowDropNewest, []string{"1", "2", "3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bus := event.NewInProc()
			defer bus.Close()
			sub := subscribe(t, bus, "a", event.WithBufferSize(3), event.WithOverflow(c.policy, 0))
			for i := 1; i <= 5; i++ {
				publish(t, bus, "a", strconv.Itoa(i))
			}
			sub.Close()
			if got := ids(drain(t, sub)); !slices.Equal(got, c.want) {
				t.Fatalf("received %q, want %q", got, c.want)
			}
		})
	}
}

func TestDropOldestIsTheDefault(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	sub := subscribe(t, bus, "a", event.WithBufferSize(1))
	publish(t, bus, "a", "1")
	publish(t, bus, "a", "2")
	sub.Close()
	if got := ids(drain(t, sub)); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("received %q, want [2]", got)
	}
}

func TestDetachEndsSubscriptionWithReason(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	sub := subscribe(t, bus, "a.>", event.WithBufferSize(2), event.WithOverflow(event.OverflowDetach, 0))
	for i := 1; i <= 3; i++ {
		publish(t, bus, "a.b", strconv.Itoa(i))
	}
	publish(t, bus, "a.b", "4") // after the detach: must go nowhere
	if got := ids(drain(t, sub)); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("received %q, want the buffered [1 2]", got)
	}
	err := sub.Err()
	if !errors.Is(err, event.ErrDetached) {
		t.Fatalf("Err() = %v, want ErrDetached", err)
	}
	if !strings.Contains(err.Error(), `"a.b"`) {
		t.Fatalf("Err() = %v, want it to name the subject", err)
	}
	if n := bus.Len(); n != 0 {
		t.Fatalf("Len() = %d after detach, want 0", n)
	}
}

func TestBlockDropsAfterTimeout(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	const timeout = 20 * time.Millisecond
	sub := subscribe(t, bus, "a", event.WithBufferSize(1), event.WithOverflow(event.OverflowBlock, timeout))
	publish(t, bus, "a", "1")
	start := time.Now()
	publish(t, bus, "a", "2")
	if waited := time.Since(start); waited < timeout {
		t.Fatalf("Publish returned after %v, before the %v block timeout", waited, timeout)
	}
	sub.Close()
	if got := ids(drain(t, sub)); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("received %q, want [1]", got)
	}
}

func TestBlockWaitsForRoom(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	sub := subscribe(t, bus, "a", event.WithBufferSize(1), event.WithOverflow(event.OverflowBlock, time.Hour))
	publish(t, bus, "a", "1")
	published := make(chan error, 1)
	go func() { published <- bus.Publish(context.Background(), event.Envelope{ID: "2", Subject: "a"}) }()

	for _, want := range []string{"1", "2"} {
		select {
		case env := <-sub.C():
			if env.ID != want {
				t.Fatalf("received %q, want %q", env.ID, want)
			}
		case <-time.After(waitLimit):
			t.Fatalf("envelope %q not received", want)
		}
	}
	waitPublish(t, published)
}

func TestBlockWaitEndsEarly(t *testing.T) {
	cases := []struct {
		name    string
		release func(cancel context.CancelFunc, bus *event.InProc, sub event.Subscription)
		// wantErrs are the acceptable Publish results: the release may
		// come before Publish starts waiting.
		wantErrs []error
	}{
		{"publish context", func(cancel context.CancelFunc, _ *event.InProc, _ event.Subscription) { cancel() },
			[]error{context.Canceled}},
		{"subscription close", func(_ context.CancelFunc, _ *event.InProc, sub event.Subscription) { sub.Close() },
			[]error{nil}},
		{"bus close", func(_ context.CancelFunc, bus *event.InProc, _ event.Subscription) { bus.Close() },
			[]error{nil, event.ErrBusClosed}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bus := event.NewInProc()
			defer bus.Close()
			sub := subscribe(t, bus, "a", event.WithBufferSize(1), event.WithOverflow(event.OverflowBlock, time.Hour))
			publish(t, bus, "a", "1")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			published := make(chan error, 1)
			go func() { published <- bus.Publish(ctx, event.Envelope{ID: "2", Subject: "a"}) }()
			c.release(cancel, bus, sub)
			waitPublish(t, published, c.wantErrs...)
		})
	}
}

// waitPublish waits for a Publish result and checks it is one of want (nil
// when want is empty).
func waitPublish(t *testing.T, published <-chan error, want ...error) {
	t.Helper()
	if len(want) == 0 {
		want = []error{nil}
	}
	select {
	case err := <-published:
		if !slices.ContainsFunc(want, func(w error) bool { return errors.Is(err, w) }) {
			t.Fatalf("Publish = %v, want one of %v", err, want)
		}
	case <-time.After(waitLimit):
		t.Fatalf("Publish still blocked after %v", waitLimit)
	}
}

// TestPublishNeverBlocksOnStalledSubscriber publishes through a subscriber
// that never reads; a second subscriber must receive everything, in order,
// and the publisher must finish.
func TestPublishNeverBlocksOnStalledSubscriber(t *testing.T) {
	for _, policy := range []event.Overflow{event.OverflowDropOldest, event.OverflowDropNewest, event.OverflowDetach} {
		t.Run(strconv.Itoa(int(policy)), func(t *testing.T) {
			bus := event.NewInProc()
			defer bus.Close()
			stalled := subscribe(t, bus, "run.>", event.WithBufferSize(1), event.WithOverflow(policy, 0))
			defer stalled.Close()
			// The healthy reader opts into blocking so that nothing is
			// dropped for it when the scheduler favours the publisher.
			healthy := subscribe(t, bus, "run.>", event.WithBufferSize(8), event.WithOverflow(event.OverflowBlock, time.Hour))

			const n = 2000
			received := make(chan []event.Envelope, 1)
			go func() {
				var got []event.Envelope
				for env := range healthy.C() {
					got = append(got, env)
				}
				received <- got
			}()
			published := make(chan error, 1)
			go func() {
				for i := range n {
					if err := bus.Publish(context.Background(), event.Envelope{ID: strconv.Itoa(i), Subject: "run.x.delta"}); err != nil {
						published <- err
						return
					}
				}
				published <- nil
			}()
			waitPublish(t, published)
			healthy.Close()

			select {
			case got := <-received:
				if len(got) != n {
					t.Fatalf("healthy subscriber received %d envelopes, want %d", len(got), n)
				}
				for i, env := range got {
					if env.ID != strconv.Itoa(i) {
						t.Fatalf("envelope %d has id %q: out of order", i, env.ID)
					}
				}
			case <-time.After(waitLimit):
				t.Fatal("healthy subscriber did not finish")
			}
		})
	}
}
