package push

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// Options configure push-notification delivery.
type Options struct {
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
	// (default 500ms); a config set on this replica is looked for at once
	// (Deliverer.Poke).
	ClaimEvery time.Duration
	// Observe, when set, is called after every delivery, delivered or
	// given up (metrics, benchmarks). It must not block.
	Observe func(Delivery)
}

// withDefaults returns o with defaults filled in.
func (o Options) withDefaults() Options {
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

// Store keeps push configs and the durable cursor of each one's delivery
// (store.PushConfigs: memstore and pgstore implement it). Delivery is
// claimed per config, so that one replica at a time delivers a config's
// updates, in order.
type Store interface {
	PutPushConfig(ctx context.Context, c run.PushConfig) error
	GetPushConfig(ctx context.Context, taskID, id string) (run.PushConfig, error)
	ListPushConfigs(ctx context.Context, taskID string) ([]run.PushConfig, error)
	DeletePushConfig(ctx context.Context, taskID, id string) error
	ClaimPushDeliveries(ctx context.Context, owner string, ttl time.Duration, limit int) ([]run.PushConfig, error)
	SavePushDelivery(ctx context.Context, c run.PushConfig, ttl time.Duration) (run.PushConfig, error)
	SavePushDeliveries(ctx context.Context, cs []run.PushConfig, ttl time.Duration) ([]bool, error)
}

// Renderer is a face's side of delivery: where a config's updates go and
// what each carries, in the face's protocol.
type Renderer interface {
	// Feed prepares the delivery of c's updates of task t after cursor
	// (the webhook got every update up to it). An errdefs.Validation
	// error says the stored config is unreadable: its delivery ends.
	Feed(ctx context.Context, c run.PushConfig, t run.Task, cursor int64) (Feed, error)
}

// Feed renders one config's updates.
type Feed interface {
	// Target is the webhook the updates are posted to.
	Target() Target
	// Body is the request body of ev's update, nil when ev makes none.
	Body(ctx context.Context, ev run.Event) ([]byte, error)
}

// Finisher is a Feed whose delivery ends before its task's log does (a
// run webhook: one POST once the run stopped). The follower asks it after
// each update; once it says finished, the config is saved done.
type Finisher interface {
	Finished() bool
}

// Target is a webhook: its URL and the headers every request carries
// (content type, token, authorization).
type Target struct {
	URL    string
	Header http.Header
}

// Deliverer is one replica's push delivery. Lock order: mu alone.
type Deliverer struct {
	st     Store
	rt     *runtime.Runtime
	render Renderer
	log    *slog.Logger
	opts   Options
	client webhookClient
	clock  retryClock
	saver  *cursorSaver
	wake   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	// active maps each config delivered here to its claim's generation.
	active map[pushKey]int64
}

// New returns the delivery of the configs in st of the runs of rt,
// rendered by r; log may be nil.
func New(st Store, rt *runtime.Runtime, r Renderer, opts Options, log *slog.Logger) *Deliverer {
	if log == nil {
		log = slog.Default()
	}
	d := &Deliverer{st: st, rt: rt, render: r, log: log, opts: opts.withDefaults(),
		wake: make(chan struct{}, 1), active: map[pushKey]int64{}}
	d.client = newWebhookClient(d.opts)
	return d
}

// Poke makes a running delivery look for configs now (a config was set on
// this replica).
func (d *Deliverer) Poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Active is how many webhooks this replica delivers now: one goroutine
// each, reading its task's log. A webhook whose task waits for input is
// parked and not counted.
func (d *Deliverer) Active() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.active)
}

// Run delivers push notifications from this replica until ctx ends, then
// hands its claims over and returns once every delivery goroutine has
// stopped. Call it once.
//
// Every ClaimEvery (or at once when poked) it claims the configs whose
// delivery is pending and unclaimed or whose claim expired — another
// replica died —, and delivers each in a goroutine of its own
// (follow.go): a slow webhook delays only its own updates, and never the
// run, which it reads from the log like any stream.
func (d *Deliverer) Run(ctx context.Context) {
	defer d.client.CloseIdleConnections()
	d.saver = newCursorSaver(d.st, d.opts.ClaimTTL)
	saving := make(chan struct{})
	go func() {
		defer close(saving)
		d.saver.run(ctx)
	}()
	defer func() { <-saving }()
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

// claimBatch bounds the configs one claim round takes.
const claimBatch = 256

// claim takes pending configs and starts delivering each.
func (d *Deliverer) claim(ctx context.Context) {
	cs, err := d.st.ClaimPushDeliveries(ctx, d.rt.ReplicaID(), d.opts.ClaimTTL, claimBatch)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("push: claiming deliveries failed; will retry", "err", err)
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
			d.follow(run.WithTenant(ctx, c.Tenant), c)
		}()
	}
	if len(cs) == claimBatch {
		d.Poke() // more may be waiting
	}
}

func (d *Deliverer) done(k pushKey, gen int64) {
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
