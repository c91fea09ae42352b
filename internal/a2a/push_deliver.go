package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"agentd/internal/errdefs"
	"agentd/internal/push"
	"agentd/internal/run"
)

// PushOptions configure push-notification delivery (internal/push).
type PushOptions = push.Options

// Delivery is the outcome of one update's delivery to one webhook.
type Delivery = push.Delivery

// Webhook requests carry the token in both header spellings the SDKs use
// (a2a-go reads A2A-Notification-Token, the Python SDK and v0.3 receivers
// X-A2A-Notification-Token); a receiver reading either finds it.
const (
	tokenHeader       = "A2A-Notification-Token"
	tokenHeaderLegacy = "X-A2A-Notification-Token"
)

// pushState is the Server's delivery, while DeliverPushes runs.
type pushState struct {
	d atomic.Pointer[push.Deliverer]
}

// pokePush makes the running delivery look for configs now.
func (s *Server) pokePush() {
	if d := s.push.d.Load(); d != nil {
		d.Poke()
	}
}

// ActivePushDeliveries is how many webhooks this replica delivers now (see
// push.Deliverer.Active).
func (s *Server) ActivePushDeliveries() int {
	if d := s.push.d.Load(); d != nil {
		return d.Active()
	}
	return 0
}

// DeliverPushes delivers this replica's share of the push notifications
// of Options.PushStore's configs until ctx ends, each update as an A2A
// stream carries it (push.Deliverer.Run); without a PushStore it only
// waits for ctx. Call it once per Server.
func (s *Server) DeliverPushes(ctx context.Context) {
	if s.opts.PushStore == nil {
		<-ctx.Done()
		return
	}
	d := push.New(s.opts.PushStore, s.rt, renderer{s: s}, s.opts.Push, s.opts.Logger)
	s.push.d.Store(d)
	defer s.push.d.Store(nil)
	d.Run(ctx)
}

// configs is where the tasks' push configs are kept: Options.PushStore,
// or, without one, a store that refuses every call.
func (s *Server) configs() push.Store {
	if s.opts.PushStore == nil {
		return noPushStore{}
	}
	return s.opts.PushStore
}

// noPushStore answers that push notifications are not available.
type noPushStore struct{}

func errNoPush() error {
	return errdefs.NotAvailablef("push notifications are not available on this server")
}

func (noPushStore) PutPushConfig(context.Context, run.PushConfig) error { return errNoPush() }
func (noPushStore) GetPushConfig(context.Context, string, string) (run.PushConfig, error) {
	return run.PushConfig{}, errNoPush()
}
func (noPushStore) ListPushConfigs(context.Context, string) ([]run.PushConfig, error) {
	return nil, errNoPush()
}
func (noPushStore) DeletePushConfig(context.Context, string, string) error { return errNoPush() }
func (noPushStore) ClaimPushDeliveries(context.Context, string, time.Duration, int) ([]run.PushConfig, error) {
	return nil, errNoPush()
}
func (noPushStore) SavePushDelivery(context.Context, run.PushConfig, time.Duration) (run.PushConfig, error) {
	return run.PushConfig{}, errNoPush()
}
func (noPushStore) SavePushDeliveries(context.Context, []run.PushConfig, time.Duration) ([]bool, error) {
	return nil, errNoPush()
}

// renderer renders a config's updates as A2A webhooks (push.Renderer).
type renderer struct{ s *Server }

// Feed reads c's webhook and primes a translator at cursor, as a stream
// resumed there would be.
func (r renderer) Feed(ctx context.Context, c run.PushConfig, t run.Task, cursor int64) (push.Feed, error) {
	var hook webhook
	if err := json.Unmarshal(c.Config, &hook); err != nil {
		return nil, errdefs.Validationf("push config %s of task %s: %v", c.ID, c.TaskID, err)
	}
	h := &handler{s: r.s}
	if hook.Run {
		return &runFeed{feed: feed{h: h, hook: hook, task: t}}, nil
	}
	x, err := h.prime(ctx, t, cursor, true)
	if err != nil {
		return nil, err
	}
	return &feed{h: h, hook: hook, task: t, x: x}, nil
}

// feed is one config's A2A rendering.
type feed struct {
	h    *handler
	hook webhook
	task run.Task
	x    *translator
}

// Target is the webhook with its content type, token and authorization.
func (f *feed) Target() push.Target {
	hd := http.Header{"Content-Type": {"application/a2a+json"}}
	if f.hook.V0 {
		hd.Set("Content-Type", "application/json")
	}
	if f.hook.Token != "" {
		hd.Set(tokenHeader, f.hook.Token)
		hd.Set(tokenHeaderLegacy, f.hook.Token)
	}
	if a := f.hook.Auth; a != nil && a.Credentials != "" {
		hd.Set("Authorization", a.Scheme+" "+a.Credentials)
	}
	return push.Target{URL: f.hook.URL, Header: hd}
}

// Body is the webhook's request body for ev's update, nil when there is
// none: the StreamResponse; for a v0.3 config, at a status update, the
// Task as v0.3 servers send it — its status and its artifacts through ev,
// in v0.3's shape (its chunks reach the receiver in the next Task).
func (f *feed) Body(ctx context.Context, ev run.Event) ([]byte, error) {
	up := f.x.translate(ev)
	if up == nil {
		return nil, nil
	}
	if !f.hook.V0 {
		return json.Marshal(a2a.StreamResponse{Event: up})
	}
	st, ok := up.(*a2a.TaskStatusUpdateEvent)
	if !ok {
		return nil, nil
	}
	task := &a2a.Task{ID: st.TaskID, ContextID: st.ContextID, Status: st.Status, Metadata: st.Metadata}
	arts, err := f.h.artifacts(ctx, f.task, ev.Seq)
	if err != nil {
		return nil, err
	}
	task.Artifacts = arts
	return json.Marshal(a2av0.FromV1Task(task))
}
