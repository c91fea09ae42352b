package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"agentd/internal/errdefs"
	"agentd/internal/event"
)

// StreamSink receives a run's stream deltas from a StreamRouter and
// forwards them to a transport (SSE, WebSocket, a log). OnDelta is called
// from the router's goroutine for that run, one delta at a time, in
// publish order; it must not block for long, since the run's other sinks
// wait behind it. A returned error is reported to the router's error
// handler and does not affect the other sinks.
type StreamSink interface {
	OnDelta(ctx context.Context, env event.Envelope, delta StreamDeltaPayload) error
}

// StreamSinkFunc adapts a function to StreamSink.
type StreamSinkFunc func(ctx context.Context, env event.Envelope, delta StreamDeltaPayload) error

// OnDelta calls f.
func (f StreamSinkFunc) OnDelta(ctx context.Context, env event.Envelope, delta StreamDeltaPayload) error {
	return f(ctx, env, delta)
}

// StreamEndSink is an optional StreamSink extension told when its run's
// stream ends while it is attached: err is nil after run.end, the
// subscription's error when the bus ended it (a detach after overflow, a
// closed bus), or a NotAvailable error when the router closed. The sink
// is already detached when OnStreamEnd runs; like OnDelta, it must not
// call its own detach.
type StreamEndSink interface {
	OnStreamEnd(runID string, err error)
}

// StreamRouterOption tunes NewStreamRouter.
type StreamRouterOption func(*streamRouterOpts)

type streamRouterOpts struct {
	bufferSize int
	includeAll bool
	onSinkErr  func(sinkID string, err error)
	subOpts    []event.SubOption
}

// WithStreamBufferSize sets the buffer of each run's bus subscription
// (default event.DefaultBufferSize).
func WithStreamBufferSize(n int) StreamRouterOption {
	return func(o *streamRouterOpts) { o.bufferSize = n }
}

// WithStreamIncludeAllRunEvents makes sinks receive every event of the run
// (run.start, steps, runtime events, run.end), not only stream deltas. The
// delta argument is then the zero value for non-delta events: branch on
// IsStreamDelta(env.Subject).
func WithStreamIncludeAllRunEvents() StreamRouterOption {
	return func(o *streamRouterOpts) { o.includeAll = true }
}

// WithStreamSinkErrorHandler installs fn, called once per error a sink
// returns (sinkID "" for a malformed delta that reached no sink). The
// default drops errors. fn runs on the router's goroutine for the run and
// may detach the failing sink.
func WithStreamSinkErrorHandler(fn func(sinkID string, err error)) StreamRouterOption {
	return func(o *streamRouterOpts) { o.onSinkErr = fn }
}

// WithStreamSubOptions adds options to each run's bus subscription, after
// the buffer size (so they may override it). A filter given here narrows
// what sinks see, but run.end always passes so teardown happens.
func WithStreamSubOptions(opts ...event.SubOption) StreamRouterOption {
	return func(o *streamRouterOpts) { o.subOpts = append(o.subOpts, opts...) }
}

// StreamRouter fans the stream deltas of runs out from an event.Bus to
// any number of sinks per run. It holds one bus subscription per run,
// created on the first Attach and shared by every sink of that run, and
// tears it down when the run's run.end arrives (in every mode), when the
// run's last sink detaches, or on Close.
//
// Goroutines: one per subscribed run, owned by the router; Close stops
// and waits for all of them. Lock order: a sink's delivery lock, then the
// router's lock (a sink may Attach or detach other sinks from OnDelta);
// detach takes the router's lock first and releases it before taking the
// sink's. Consequently a sink must not call its own detach, nor Close,
// from inside its OnDelta or OnStreamEnd (the error handler may detach).
type StreamRouter struct {
	bus  event.Bus
	opts streamRouterOpts

	ctx    context.Context // cancelled by Close; parent of every run's ctx
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per running fanout loop

	mu     sync.Mutex
	closed bool
	runs   map[string]*runFanout
}

// runFanout is one run's subscription and its attached sinks.
type runFanout struct {
	runID  string
	sub    event.Subscription
	ctx    context.Context
	cancel context.CancelFunc
	// sinks is replaced, never modified, under the router's lock, so the
	// loop reads it without locking.
	sinks atomic.Pointer[[]*attachment]
}

// attachment is one Attach call. mu serialises delivery against detach so
// that once detach returns the sink is never called again.
type attachment struct {
	id       string
	sink     StreamSink
	mu       sync.Mutex
	detached bool
}

// NewStreamRouter returns a router reading from bus. A nil bus makes every
// Attach fail with a Validation error.
func NewStreamRouter(bus event.Bus, opts ...StreamRouterOption) *StreamRouter {
	o := streamRouterOpts{bufferSize: event.DefaultBufferSize}
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &StreamRouter{bus: bus, opts: o, ctx: ctx, cancel: cancel, runs: make(map[string]*runFanout)}
}

// Attach registers sink for runID's deltas published from now on and
// returns detach, which the caller must call when its transport closes.
// detach is idempotent; once it returns, the sink is not called again.
// sinkID names the sink in error reports and may be reused after detach.
// Attaching after Close fails with a NotAvailable error.
func (r *StreamRouter) Attach(runID, sinkID string, sink StreamSink) (detach func(), err error) {
	if r.bus == nil {
		return nil, errdefs.Validationf("attach sink %q to run %q: stream router has no bus", sinkID, runID)
	}
	if sink == nil {
		return nil, errdefs.Validationf("attach sink %q to run %q: nil sink", sinkID, runID)
	}
	a := &attachment{id: sinkID, sink: sink}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errdefs.NotAvailablef("attach sink %q to run %q: stream router closed", sinkID, runID)
	}
	f := r.runs[runID]
	if f == nil {
		if f, err = r.subscribe(runID); err != nil {
			return nil, err
		}
		r.runs[runID] = f
		r.wg.Go(func() { r.loop(f) })
	}
	f.setSinks(append(slices.Clip(f.loadSinks()), a)) // never write into a published slice
	return func() { r.detach(f, a) }, nil
}

// ActiveRuns returns how many runs currently hold a bus subscription.
func (r *StreamRouter) ActiveRuns() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.runs)
}

// Close tears down every run's subscription, tells attached
// StreamEndSinks, and waits for the router's goroutines. It is idempotent.
func (r *StreamRouter) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	return nil
}

func (r *StreamRouter) subscribe(runID string) (*runFanout, error) {
	ctx, cancel := context.WithCancel(r.ctx)
	opts := make([]event.SubOption, 0, len(r.opts.subOpts)+2)
	opts = append(opts, event.WithBufferSize(r.opts.bufferSize))
	opts = append(opts, r.opts.subOpts...)
	opts = append(opts, event.WithFilter(r.filter(event.ApplySubOptions(r.opts.subOpts...).Filter)))
	// PatternRun, not PatternRunStream, even when only deltas are wanted:
	// the subscription must see run.end to tear itself down.
	sub, err := r.bus.Subscribe(ctx, PatternRun(runID), opts...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("attach to run %q: subscribe: %w", runID, err)
	}
	return &runFanout{runID: runID, sub: sub, ctx: ctx, cancel: cancel}, nil
}

// filter keeps run.end always, and otherwise what the mode and the
// caller's own filter select, so the subscription's buffer holds only
// envelopes some sink will see.
func (r *StreamRouter) filter(user func(event.Envelope) bool) func(event.Envelope) bool {
	includeAll := r.opts.includeAll
	return func(env event.Envelope) bool {
		if IsRunEnd(env.Subject) {
			return true
		}
		if !includeAll && !IsStreamDelta(env.Subject) {
			return false
		}
		return user == nil || user(env)
	}
}

func (r *StreamRouter) loop(f *runFanout) {
	for {
		select {
		case <-f.ctx.Done():
			r.finish(f, r.endCause())
			return
		case env, ok := <-f.sub.C():
			if !ok {
				cause := f.sub.Err()
				if f.ctx.Err() != nil {
					cause = r.endCause() // our own cancel closed the subscription
				}
				r.finish(f, cause)
				return
			}
			end := IsRunEnd(env.Subject)
			r.route(f, env)
			if end {
				r.finish(f, nil)
				return
			}
		}
	}
}

// route decodes env and hands it to every attached sink.
func (r *StreamRouter) route(f *runFanout, env event.Envelope) {
	var delta StreamDeltaPayload
	if IsStreamDelta(env.Subject) {
		var err error
		if delta, err = DecodeStreamDelta(env); err != nil {
			r.reportSinkErr("", err)
			return
		}
	} else if !r.opts.includeAll {
		return
	}
	for _, a := range f.loadSinks() {
		if err := a.deliver(f.ctx, env, delta); err != nil {
			r.reportSinkErr(a.id, fmt.Errorf("sink %q, run %q: %w", a.id, f.runID, err))
		}
	}
}

func (a *attachment) deliver(ctx context.Context, env event.Envelope, delta StreamDeltaPayload) (err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.detached {
		return nil
	}
	defer func() {
		// A panicking sink is one failed sink, not a crashed router.
		if p := recover(); p != nil {
			err = errdefs.Internalf("sink panicked: %v", p)
		}
	}()
	return a.sink.OnDelta(ctx, env, delta)
}

func (r *StreamRouter) reportSinkErr(sinkID string, err error) {
	if r.opts.onSinkErr != nil {
		r.opts.onSinkErr(sinkID, err)
	}
}

// endCause is why a fanout's context ended: the router closing, or its
// last sink detaching (when nobody is left to tell).
func (r *StreamRouter) endCause() error {
	if r.ctx.Err() != nil {
		return errdefs.NotAvailablef("stream router closed")
	}
	return nil
}

// finish unregisters f, closes its subscription and tells the sinks still
// attached that the stream ended.
func (r *StreamRouter) finish(f *runFanout, cause error) {
	r.mu.Lock()
	if r.runs[f.runID] == f {
		delete(r.runs, f.runID)
	}
	sinks := f.loadSinks()
	f.setSinks(nil)
	r.mu.Unlock()
	f.cancel()
	_ = f.sub.Close()
	for _, a := range sinks {
		a.end(f.runID, cause)
	}
}

func (a *attachment) end(runID string, cause error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.detached {
		return
	}
	a.detached = true
	if es, ok := a.sink.(StreamEndSink); ok {
		es.OnStreamEnd(runID, cause)
	}
}

// detach removes a from f; when a was f's last sink the run's
// subscription is torn down (its loop finishes on its own).
func (r *StreamRouter) detach(f *runFanout, a *attachment) {
	r.mu.Lock()
	old := f.loadSinks()
	rest := make([]*attachment, 0, len(old))
	for _, s := range old {
		if s != a {
			rest = append(rest, s)
		}
	}
	last := false
	if len(rest) != len(old) {
		f.setSinks(rest)
		if last = len(rest) == 0; last && r.runs[f.runID] == f {
			delete(r.runs, f.runID)
		}
	}
	r.mu.Unlock()
	if last {
		// Unsubscribe now rather than when the loop notices, so the bus
		// stops buffering for nobody as soon as detach returns.
		f.cancel()
		_ = f.sub.Close()
	}

	a.mu.Lock()
	a.detached = true
	a.mu.Unlock()
}

func (f *runFanout) loadSinks() []*attachment {
	if p := f.sinks.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *runFanout) setSinks(s []*attachment) { f.sinks.Store(&s) }
