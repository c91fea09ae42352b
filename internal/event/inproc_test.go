package event_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/event"
)

// waitLimit bounds every wait in these tests; it is generous because it is
// only ever reached when something is broken.
const waitLimit = 10 * time.Second

func publish(t *testing.T, bus event.Bus, subject event.Subject, id string) {
	t.Helper()
	if err := bus.Publish(context.Background(), event.Envelope{ID: id, Subject: subject}); err != nil {
		t.Fatalf("Publish(%q): %v", subject, err)
	}
}

func subscribe(t *testing.T, bus event.Bus, p event.Pattern, opts ...event.SubOption) event.Subscription {
	t.Helper()
	sub, err := bus.Subscribe(context.Background(), p, opts...)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", p, err)
	}
	return sub
}

// drain reads sub until its channel closes and returns what it yielded.
func drain(t *testing.T, sub event.Subscription) []event.Envelope {
	t.Helper()
	got, closed := drainWithin(sub, waitLimit)
	if !closed {
		t.Fatalf("subscription not closed after %v (received %d)", waitLimit, len(got))
	}
	return got
}

// drainWithin is drain for goroutines other than the test's: it reports
// whether the channel closed within limit instead of failing the test.
func drainWithin(sub event.Subscription, limit time.Duration) ([]event.Envelope, bool) {
	var got []event.Envelope
	deadline := time.After(limit)
	for {
		select {
		case env, ok := <-sub.C():
			if !ok {
				return got, true
			}
			got = append(got, env)
		case <-deadline:
			return got, false
		}
	}
}

func ids(envs []event.Envelope) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.ID
	}
	return out
}

func subjects(envs []event.Envelope) []event.Subject {
	out := make([]event.Subject, len(envs))
	for i, e := range envs {
		out[i] = e.Subject
	}
	return out
}

func TestDeliveryReachesMatchingSubscriptionsOnly(t *testing.T) {
	bus := event.NewInProc()
	patterns := []event.Pattern{"engine.run.r1.end", "engine.run.*.end", "engine.run.r1.>", ">", "engine.run.r2.>", "other"}
	subs := make([]event.Subscription, len(patterns))
	for i, p := range patterns {
		subs[i] = subscribe(t, bus, p)
	}
	published := []event.Subject{"engine.run.r1.start", "engine.run.r1.end", "engine.run.r2.end", "engine.run.r10.end", "engine.run.r1"}
	for i, s := range published {
		publish(t, bus, s, strconv.Itoa(i))
	}
	bus.Close()

	want := map[event.Pattern][]event.Subject{
		"engine.run.r1.end": {"engine.run.r1.end"},
		"engine.run.*.end":  {"engine.run.r1.end", "engine.run.r2.end", "engine.run.r10.end"},
		"engine.run.r1.>":   {"engine.run.r1.start", "engine.run.r1.end"},
		">":                 published,
		"engine.run.r2.>":   {"engine.run.r2.end"},
		"other":             nil,
	}
	for i, p := range patterns {
		if got := subjects(drain(t, subs[i])); !slices.Equal(got, want[p]) {
			t.Errorf("pattern %q received %q, want %q", p, got, want[p])
		}
	}
}

// TestDeliveryAgreesWithMatch checks the bus index against Pattern.Match
// for many overlapping random patterns, including several on one pattern.
func TestDeliveryAgreesWithMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	bus := event.NewInProc()
	var published []event.Subject
	for range 200 {
		published = append(published, randomSubject(r))
	}
	patterns := make([]event.Pattern, 150)
	subs := make([]event.Subscription, len(patterns))
	for i := range patterns {
		patterns[i] = randomPattern(r)
		subs[i] = subscribe(t, bus, patterns[i], event.WithBufferSize(len(published)))
	}
	for i, s := range published {
		publish(t, bus, s, strconv.Itoa(i))
	}
	bus.Close()
	for i, p := range patterns {
		var want []event.Subject
		for _, s := range published {
			if p.Match(s) {
				want = append(want, s)
			}
		}
		if got := subjects(drain(t, subs[i])); !slices.Equal(got, want) {
			t.Errorf("pattern %q received %q, want %q", p, got, want)
		}
	}
}

func TestSubscriptionSeesOnlyLaterPublishesInOrder(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	publish(t, bus, "a.b", "before")
	sub := subscribe(t, bus, "a.>", event.WithBufferSize(100))
	var want []string
	for i := range 100 {
		want = append(want, strconv.Itoa(i))
		publish(t, bus, "a.b", want[i])
	}
	sub.Close()
	if got := ids(drain(t, sub)); !slices.Equal(got, want) {
		t.Fatalf("received %q, want %q", got, want)
	}
}

func TestFilterDropsBeforeBuffering(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	sub := subscribe(t, bus, "a.*", event.WithBufferSize(1), event.WithOverflow(event.OverflowDetach, 0),
		event.WithFilter(func(e event.Envelope) bool { return e.Subject == "a.keep" }))
	publish(t, bus, "a.skip", "1")
	publish(t, bus, "a.keep", "2")
	publish(t, bus, "a.skip", "3") // would detach if it were buffered
	sub.Close()
	if got := ids(drain(t, sub)); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("received %q, want [2]", got)
	}
	if err := sub.Err(); err != nil {
		t.Fatalf("Err() = %v, want nil", err)
	}
}

func TestContextEndsSubscription(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := bus.Subscribe(ctx, "a.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Err(); err != nil {
		t.Fatalf("Err() while open = %v, want nil", err)
	}
	publish(t, bus, "a.b", "1")
	cancel()
	if got := ids(drain(t, sub)); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("received %q, want the envelope buffered before cancel", got)
	}
	if err := sub.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() = %v, want context.Canceled", err)
	}
	if n := bus.Len(); n != 0 {
		t.Fatalf("Len() = %d after cancel, want 0", n)
	}
	publish(t, bus, "a.b", "2") // must not reach the closed channel
}

func TestSubscriptionCloseIsIdempotent(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := bus.Subscribe(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := sub.Close(); err != nil {
			t.Fatalf("Close() = %v", err)
		}
	}
	cancel() // a later cancel must not overwrite the reason
	drain(t, sub)
	if err := sub.Err(); err != nil {
		t.Fatalf("Err() after Close = %v, want nil", err)
	}
	if n := bus.Len(); n != 0 {
		t.Fatalf("Len() = %d after Close, want 0", n)
	}
}

func TestBusClose(t *testing.T) {
	bus := event.NewInProc()
	sub := subscribe(t, bus, "a")
	publish(t, bus, "a", "1")
	for range 2 {
		if err := bus.Close(); err != nil {
			t.Fatalf("Close() = %v", err)
		}
	}
	if got := ids(drain(t, sub)); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("received %q, want the envelope buffered before Close", got)
	}
	if err := sub.Err(); !errors.Is(err, event.ErrBusClosed) {
		t.Fatalf("Err() = %v, want ErrBusClosed", err)
	}
	err := bus.Publish(context.Background(), event.Envelope{Subject: "a"})
	if !errors.Is(err, event.ErrBusClosed) {
		t.Fatalf("Publish after Close = %v, want ErrBusClosed", err)
	}
	if _, err := bus.Subscribe(context.Background(), "a"); !errors.Is(err, event.ErrBusClosed) {
		t.Fatalf("Subscribe after Close = %v, want ErrBusClosed", err)
	}
	if n := bus.Len(); n != 0 {
		t.Fatalf("Len() = %d after Close, want 0", n)
	}
}

func TestSubscribeRejectsBadInput(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		pattern event.Pattern
		opts    []event.SubOption
		class   errdefs.Class
	}{
		{"invalid pattern", context.Background(), "a.>.b", nil, errdefs.ClassValidation},
		{"unknown overflow", context.Background(), "a", []event.SubOption{event.WithOverflow(event.Overflow(9), 0)}, errdefs.ClassValidation},
		{"done context", done, "a", nil, errdefs.ClassAborted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub, err := bus.Subscribe(c.ctx, c.pattern, c.opts...)
			if err == nil || sub != nil {
				t.Fatalf("Subscribe = %v, %v; want an error", sub, err)
			}
			if got := errdefs.ClassOf(err); got != c.class {
				t.Fatalf("Subscribe error %v has class %q, want %q", err, got, c.class)
			}
		})
	}
	if n := bus.Len(); n != 0 {
		t.Fatalf("Len() = %d, want 0", n)
	}
}

func TestPublishRejectsInvalidSubject(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	sub := subscribe(t, bus, ">")
	for _, s := range []event.Subject{"", "a..b", "a.*", "a.>"} {
		err := bus.Publish(context.Background(), event.Envelope{Subject: s})
		if !errdefs.IsValidation(err) {
			t.Errorf("Publish(%q) = %v, want a validation error", s, err)
		}
	}
	sub.Close()
	if got := drain(t, sub); len(got) != 0 {
		t.Fatalf("invalid subjects were delivered: %q", subjects(got))
	}
}

// TestSubscriptionsStartNoGoroutines guards the design choice that lets a
// server hold 10k open streams: a subscription watching its context costs a
// callback registration, not a parked goroutine.
func TestSubscriptionsStartNoGoroutines(t *testing.T) {
	bus := event.NewInProc()
	defer bus.Close()
	ctx, cancel := context.WithCancel(context.Background())
	before := runtime.NumGoroutine()
	subs := make([]event.Subscription, 10000)
	for i := range subs {
		sub, err := bus.Subscribe(ctx, event.Pattern("engine.run.r"+strconv.Itoa(i)+".>"), event.WithBufferSize(1))
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = sub
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d subscriptions started %d goroutines", len(subs), after-before)
	}
	cancel()
	for _, sub := range subs {
		drain(t, sub)
	}
	if n := bus.Len(); n != 0 {
		t.Fatalf("Len() = %d after cancel, want 0", n)
	}
}
