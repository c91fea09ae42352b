package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/event"
)

const waitLimit = 5 * time.Second

// collector is a sink that forwards what it receives to channels.
type collector struct {
	got   chan event.Envelope
	ended chan error
	fail  error
}

func newCollector() *collector {
	return &collector{got: make(chan event.Envelope, 1024), ended: make(chan error, 1)}
}

func (c *collector) OnDelta(_ context.Context, env event.Envelope, _ engine.StreamDeltaPayload) error {
	c.got <- env
	return c.fail
}

func (c *collector) OnStreamEnd(_ string, err error) { c.ended <- err }

// next waits for the next delivered envelope.
func (c *collector) next(t *testing.T) event.Envelope {
	t.Helper()
	select {
	case env := <-c.got:
		return env
	case <-time.After(waitLimit):
		t.Fatal("timed out waiting for a delivery")
		return event.Envelope{}
	}
}

// end waits for OnStreamEnd.
func (c *collector) end(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.ended:
		return err
	case <-time.After(waitLimit):
		t.Fatal("timed out waiting for the end of the stream")
		return nil
	}
}

func (c *collector) none(t *testing.T) {
	t.Helper()
	select {
	case env := <-c.got:
		t.Errorf("unexpected delivery %s", env.Subject)
	default:
	}
}

func newBus(t *testing.T) *event.InProc {
	t.Helper()
	bus := event.NewInProc()
	t.Cleanup(func() { _ = bus.Close() })
	return bus
}

func newRouter(t *testing.T, bus event.Bus, opts ...engine.StreamRouterOption) *engine.StreamRouter {
	t.Helper()
	r := engine.NewStreamRouter(bus, opts...)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func attach(t *testing.T, r *engine.StreamRouter, run, id string, sink engine.StreamSink) func() {
	t.Helper()
	detach, err := r.Attach(run, id, sink)
	if err != nil {
		t.Fatalf("attach %s: %v", id, err)
	}
	return detach
}

func token(t *testing.T, bus event.Bus, run, text string) {
	t.Helper()
	if err := engine.EmitStreamToken(t.Context(), bus, run, "agent", text); err != nil {
		t.Fatal(err)
	}
}

func TestStreamRouterEverySinkGetsEveryDelta(t *testing.T) {
	bus := newBus(t)
	r := newRouter(t, bus)
	sinks := []*collector{newCollector(), newCollector(), newCollector()}
	for i, s := range sinks {
		attach(t, r, "r1", fmt.Sprint("sink", i), s)
	}
	other := newCollector()
	attach(t, r, "r2", "other", other)
	if got := r.ActiveRuns(); got != 2 {
		t.Errorf("ActiveRuns = %d, want 2 (one subscription per run)", got)
	}

	_ = engine.PublishStepStart(t.Context(), bus, "r1", engine.StepInfo{Actor: "agent"})
	for i := range 10 {
		token(t, bus, "r1", fmt.Sprint(i))
	}
	for i, s := range sinks {
		for want := range 10 {
			d, err := engine.DecodeStreamDelta(s.next(t))
			if err != nil || d.Content != fmt.Sprint(want) {
				t.Fatalf("sink %d delivery %d: %+v, %v", i, want, d, err)
			}
		}
		s.none(t)
	}
	other.none(t)
}

func TestStreamRouterTearsDownOnRunEnd(t *testing.T) {
	for _, includeAll := range []bool{false, true} {
		t.Run(fmt.Sprint("includeAll=", includeAll), func(t *testing.T) {
			bus := newBus(t)
			var opts []engine.StreamRouterOption
			if includeAll {
				opts = append(opts, engine.WithStreamIncludeAllRunEvents())
			}
			r := newRouter(t, bus, opts...)
			sink := newCollector()
			attach(t, r, "r1", "s", sink)

			run := engine.Run{ID: "r1"}
			_ = engine.PublishRunStart(t.Context(), bus, run)
			token(t, bus, "r1", "hello")
			_ = engine.PublishRunEnd(t.Context(), bus, run, nil)

			if err := sink.end(t); err != nil {
				t.Errorf("stream ended with %v, want nil after run.end", err)
			}
			var got []event.Subject
			for len(sink.got) > 0 {
				got = append(got, (<-sink.got).Subject)
			}
			want := []event.Subject{engine.SubjectStreamDelta("r1", "agent")}
			if includeAll {
				want = []event.Subject{engine.SubjectRunStart("r1"), want[0], engine.SubjectRunEnd("r1")}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("sink received %v, want %v", got, want)
			}
			if r.ActiveRuns() != 0 || bus.Len() != 0 {
				t.Errorf("after run.end: %d active runs, %d bus subscriptions; want 0, 0", r.ActiveRuns(), bus.Len())
			}
			// A later attempt of the same run subscribes afresh.
			next := newCollector()
			attach(t, r, "r1", "s", next)
			token(t, bus, "r1", "again")
			if d, _ := engine.DecodeStreamDelta(next.next(t)); d.Content != "again" {
				t.Errorf("re-attached sink got %+v", d)
			}
		})
	}
}

func TestStreamRouterRunEndPassesCallerFilter(t *testing.T) {
	bus := newBus(t)
	r := newRouter(t, bus, engine.WithStreamSubOptions(event.WithFilter(func(event.Envelope) bool { return false })))
	sink := newCollector()
	attach(t, r, "r1", "s", sink)
	token(t, bus, "r1", "filtered out")
	_ = engine.PublishRunEnd(t.Context(), bus, engine.Run{ID: "r1"}, nil)
	if err := sink.end(t); err != nil {
		t.Errorf("end: %v", err)
	}
	sink.none(t)
}

func TestStreamRouterSinkErrorIsIsolated(t *testing.T) {
	bus := newBus(t)
	var mu sync.Mutex
	errs := map[string]int{}
	r := newRouter(t, bus, engine.WithStreamSinkErrorHandler(func(id string, err error) {
		mu.Lock()
		errs[id]++
		mu.Unlock()
	}))
	failing := newCollector()
	failing.fail = errors.New("broken pipe")
	panicking := engine.StreamSinkFunc(func(context.Context, event.Envelope, engine.StreamDeltaPayload) error {
		panic("sink bug")
	})
	healthy := newCollector()
	attach(t, r, "r1", "failing", failing)
	attach(t, r, "r1", "panicking", panicking)
	attach(t, r, "r1", "healthy", healthy)

	for i := range 3 {
		token(t, bus, "r1", fmt.Sprint(i))
	}
	for range 3 {
		healthy.next(t)
		failing.next(t) // the failing sink keeps receiving too
	}
	_ = engine.PublishRunEnd(t.Context(), bus, engine.Run{ID: "r1"}, nil)
	healthy.end(t)
	mu.Lock()
	defer mu.Unlock()
	if errs["failing"] != 3 || errs["panicking"] != 3 || errs["healthy"] != 0 {
		t.Errorf("errors reported per sink: %v", errs)
	}
}

func TestStreamRouterReportsMalformedDelta(t *testing.T) {
	bus := newBus(t)
	reported := make(chan string, 1)
	r := newRouter(t, bus, engine.WithStreamSinkErrorHandler(func(id string, _ error) { reported <- id }))
	sink := newCollector()
	attach(t, r, "r1", "s", sink)
	_ = bus.Publish(t.Context(), event.Envelope{Subject: engine.SubjectStreamDelta("r1", "a"), Payload: []byte(`{"type":"token"}`)})
	select {
	case id := <-reported:
		if id != "" {
			t.Errorf("malformed delta reported for sink %q, want \"\"", id)
		}
	case <-time.After(waitLimit):
		t.Fatal("malformed delta not reported")
	}
	sink.none(t)
}

func TestStreamRouterDetach(t *testing.T) {
	bus := newBus(t)
	r := newRouter(t, bus)
	a, b := newCollector(), newCollector()
	detachA := attach(t, r, "r1", "a", a)
	detachB := attach(t, r, "r1", "b", b)

	detachA()
	detachA() // idempotent
	token(t, bus, "r1", "x")
	b.next(t)
	a.none(t)

	detachB()
	if r.ActiveRuns() != 0 || bus.Len() != 0 {
		t.Errorf("after the last detach: %d active runs, %d bus subscriptions; want 0, 0", r.ActiveRuns(), bus.Len())
	}
}

func TestStreamRouterClose(t *testing.T) {
	bus := newBus(t)
	r := engine.NewStreamRouter(bus)
	sink := newCollector()
	attach(t, r, "r1", "s", sink)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := sink.end(t); !errdefs.IsNotAvailable(err) {
		t.Errorf("sink told %v on Close, want NotAvailable", err)
	}
	if _, err := r.Attach("r1", "s", sink); !errdefs.IsNotAvailable(err) {
		t.Errorf("Attach after Close: %v, want NotAvailable", err)
	}
	if bus.Len() != 0 {
		t.Errorf("%d bus subscriptions left after Close", bus.Len())
	}
}

func TestStreamRouterBusEndsSubscription(t *testing.T) {
	bus := event.NewInProc()
	r := newRouter(t, bus)
	sink := newCollector()
	attach(t, r, "r1", "s", sink)
	_ = bus.Close()
	if err := sink.end(t); !errors.Is(err, event.ErrBusClosed) {
		t.Errorf("sink told %v when the bus closed, want ErrBusClosed", err)
	}
	if _, err := r.Attach("r2", "s", newCollector()); err == nil {
		t.Errorf("Attach on a closed bus succeeded")
	}
}

func TestStreamRouterRejectsBadInput(t *testing.T) {
	if _, err := engine.NewStreamRouter(nil).Attach("r", "s", newCollector()); !errdefs.IsValidation(err) {
		t.Errorf("nil bus: %v", err)
	}
	r := newRouter(t, newBus(t))
	if _, err := r.Attach("r", "s", nil); !errdefs.IsValidation(err) {
		t.Errorf("nil sink: %v", err)
	}
}

// countSink counts deliveries and signals the end of the stream.
type countSink struct {
	n     atomic.Int64
	ended chan struct{}
}

func (c *countSink) OnDelta(context.Context, event.Envelope, engine.StreamDeltaPayload) error {
	c.n.Add(1)
	return nil
}
func (c *countSink) OnStreamEnd(string, error) { close(c.ended) }

// BenchmarkStreamRouterFanOut measures one published token delta reaching
// N sinks of its run (bus delivery, one decode, N OnDelta calls).
func BenchmarkStreamRouterFanOut(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprint("sinks=", n), func(b *testing.B) {
			bus := event.NewInProc()
			defer bus.Close()
			r := engine.NewStreamRouter(bus, engine.WithStreamBufferSize(1024),
				engine.WithStreamSubOptions(event.WithOverflow(event.OverflowBlock, time.Minute)))
			defer r.Close()
			sinks := make([]*countSink, n)
			for i := range sinks {
				sinks[i] = &countSink{ended: make(chan struct{})}
				if _, err := r.Attach("r1", fmt.Sprint(i), sinks[i]); err != nil {
					b.Fatal(err)
				}
			}
			rec := &pubRecorder{}
			_ = engine.EmitStreamToken(context.Background(), rec, "r1", "agent", "hello")
			env := rec.envs[0]
			ctx := context.Background()
			b.ReportAllocs()
			published := 0
			for b.Loop() {
				if err := bus.Publish(ctx, env); err != nil {
					b.Fatal(err)
				}
				published++
			}
			_ = engine.PublishRunEnd(ctx, bus, engine.Run{ID: "r1"}, nil)
			for _, s := range sinks {
				<-s.ended
				if got := s.n.Load(); got != int64(published) {
					b.Fatalf("sink got %d of %d deltas", got, published)
				}
			}
		})
	}
}
