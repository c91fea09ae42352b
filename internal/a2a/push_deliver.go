package a2a

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// PushOptions configure push-notification delivery.
type PushOptions struct {
	// AllowPrivate permits webhooks on loopback, private and link-local
	// addresses (tests, labs), which are otherwise refused when a config
	// is set and again when delivery connects.
	AllowPrivate bool
	// Timeout bounds one delivery attempt, connect to response (default
	// 10s).
	Timeout time.Duration
	// RetryFor bounds how long one update is retried (exponential backoff
	// with jitter) before delivery gives it up and goes on with the next
	// (default 5m).
	RetryFor time.Duration
	// ClaimTTL is how long a replica's claim on delivering a config lasts
	// without renewal (default 5s): a killed replica's deliveries resume
	// on another replica after it.
	ClaimTTL time.Duration
	// ClaimEvery is how often a replica looks for configs to deliver
	// (default 500ms); a config set on this replica is looked for at once.
	ClaimEvery time.Duration
	// RunBody builds the body of a run webhook (a config stored with
	// "run": true by another face, push_run.go) from the run as it
	// stopped. Without it such configs are dropped.
	RunBody func(ctx context.Context, t store.Task) ([]byte, error)
	// Observe, when set, is called after every delivery, delivered or
	// given up (metrics, benchmarks). It must not block.
	Observe func(Delivery)
}

// Delivery is the outcome of one update's delivery to one webhook.
type Delivery struct {
	TaskID, ConfigID string
	// Seq is the seq of the run event the update came from, EventTime
	// when that event was written, Sent when the webhook answered.
	Seq       int64
	EventTime time.Time
	Sent      time.Time
	Attempts  int
	// Err is nil when the webhook took the update (2xx); otherwise the
	// last failure, after which the update was given up.
	Err error
}

// pushState is the Server's delivery state; its zero value is ready.
type pushState struct {
	d atomic.Pointer[deliverer]
}

// pushOpts returns the push options with defaults filled in.
func (s *Server) pushOpts() PushOptions {
	o := s.opts.Push
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.RetryFor <= 0 {
		o.RetryFor = 5 * time.Minute
	}
	if o.ClaimTTL <= 0 {
		o.ClaimTTL = 5 * time.Second
	}
	if o.ClaimEvery <= 0 {
		o.ClaimEvery = 500 * time.Millisecond
	}
	return o
}

// pokePush makes the running deliverer look for configs now.
func (s *Server) pokePush() {
	if d := s.push.d.Load(); d != nil {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// ActivePushDeliveries is how many webhooks this replica delivers now:
// one goroutine each, reading its task's log. A webhook whose task waits
// for input is parked and not counted.
func (s *Server) ActivePushDeliveries() int {
	d := s.push.d.Load()
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.active)
}

// DeliverPushes delivers push notifications from this replica until ctx
// ends, then hands its claims over and returns once every delivery
// goroutine has stopped. Call it once per Server.
//
// Every ClaimEvery (or at once when a config is set here) it claims the
// configs whose delivery is pending and unclaimed or whose claim expired
// — another replica died —, and delivers each in a goroutine of its own
// (push_follow.go): a slow webhook delays only its own updates, and never
// the run, which it reads from the log like any stream.
func (s *Server) DeliverPushes(ctx context.Context) {
	d := &deliverer{s: s, opts: s.pushOpts(), wake: make(chan struct{}, 1), active: map[pushKey]int64{}}
	d.client = newWebhookClient(d.opts)
	defer d.client.CloseIdleConnections()
	d.saver = newCursorSaver(s.rt, d.opts.ClaimTTL)
	saving := make(chan struct{})
	go func() {
		defer close(saving)
		d.saver.run(ctx)
	}()
	defer func() { <-saving }()
	s.push.d.Store(d)
	defer s.push.d.Store(nil)
	t := time.NewTicker(d.opts.ClaimEvery)
	defer t.Stop()
	for {
		d.claim(ctx)
		select {
		case <-ctx.Done():
			d.wg.Wait()
			return
		case <-t.C:
		case <-d.wake:
		}
	}
}

// pushKey names a config across tenants.
type pushKey struct{ tenant, task, id string }

// deliverer is one replica's push delivery. Lock order: mu alone.
type deliverer struct {
	s      *Server
	opts   PushOptions
	client webhookClient
	clock  retryClock
	saver  *cursorSaver
	wake   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	// active maps each config delivered here to its claim's generation.
	active map[pushKey]int64
}

// claimBatch bounds the configs one claim round takes.
const claimBatch = 256

// claim takes pending configs and starts delivering each.
func (d *deliverer) claim(ctx context.Context) {
	cs, err := d.s.rt.ClaimPushDeliveries(ctx, d.opts.ClaimTTL, claimBatch)
	if err != nil {
		if ctx.Err() == nil {
			d.s.opts.Logger.Warn("push: claiming deliveries failed; will retry", "err", err)
		}
		return
	}
	for _, c := range cs {
		k := pushKey{c.Tenant, c.TaskID, c.ID}
		d.mu.Lock()
		d.active[k] = c.Claim.Generation // a previous generation stops at its next save
		d.mu.Unlock()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.done(k, c.Claim.Generation)
			d.follow(store.WithTenant(ctx, c.Tenant), c)
		}()
	}
	if len(cs) == claimBatch {
		d.s.pokePush() // more may be waiting
	}
}

func (d *deliverer) done(k pushKey, gen int64) {
	d.mu.Lock()
	if d.active[k] == gen {
		delete(d.active, k)
	}
	d.mu.Unlock()
}

// claimLost reports whether err ends a delivery: the claim went to another
// replica, or the config (or its task) is gone.
func claimLost(err error) bool {
	return errdefs.IsConflict(err) || errdefs.IsNotFound(err)
}
