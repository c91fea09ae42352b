package agentproto

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"

	"agentd/internal/netguard"
	"agentd/internal/store"
)

// WebhookOptions configure the POST a run's webhook gets once the run
// stopped (ended, or waits for input).
type WebhookOptions struct {
	// AllowPrivate lets webhooks reach loopback and private addresses (as
	// push.allow_private does for A2A push notifications).
	AllowPrivate bool
	// Timeout bounds one attempt (default 10s); RetryFor bounds the
	// retries of a webhook that fails (default 1m).
	Timeout, RetryFor time.Duration
}

// webhooks delivers runs' webhooks: one goroutine per run that named one,
// owned by the Server and stopped by Close. Delivery is at least once while
// this process lives; a run whose replica dies before its webhook was taken
// is not delivered elsewhere (A2A push notifications are the durable way).
type webhooks struct {
	opts   WebhookOptions
	client *http.Client
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

func newWebhooks(opts WebhookOptions) *webhooks {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.RetryFor <= 0 {
		opts.RetryFor = time.Minute
	}
	tr := &http.Transport{DialContext: netguard.Dialer(opts.Timeout, opts.AllowPrivate).DialContext, Proxy: nil}
	ctx, stop := context.WithCancel(context.Background())
	return &webhooks{opts: opts, client: &http.Client{Transport: tr, Timeout: opts.Timeout}, ctx: ctx, stop: stop}
}

// checkWebhook refuses a webhook that is not an absolute http(s) URL.
func checkWebhook(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badInput("webhook", "%q: want an absolute http or https URL", raw)
	}
	return nil
}

// register has the run's webhook called once the run stopped.
func (h *webhooks) register(s *Server, ctx context.Context, t store.Task, hook string) error {
	h.after(s, ctx, t.ID, hook)
	return nil
}

// after posts what the run came to, once it stopped, to hook; tenant
// scopes the reads.
func (h *webhooks) after(s *Server, tenantCtx context.Context, runID, hook string) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		ctx := context.WithoutCancel(tenantCtx)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-h.ctx.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		t, err := s.rt.Wait(ctx, runID)
		if err != nil {
			return
		}
		h.deliver(ctx, s, hook, s.webhookBody(ctx, t))
	}()
}

// webhookBody is the run, with its final values, or its error.
func (s *Server) webhookBody(ctx context.Context, t store.Task) []byte {
	body := map[string]any{}
	b, _ := json.Marshal(runOf(t))
	_ = json.Unmarshal(b, &body)
	out := s.outcomeOf(ctx, t)
	if e, ok := out["__error__"]; ok {
		body["error"] = e
	} else {
		body["values"] = out
	}
	b, _ = json.Marshal(body)
	return b
}

// deliver POSTs body to hook, retrying a failure (a network error, 408,
// 429, 5xx) with jittered exponential backoff for RetryFor.
func (h *webhooks) deliver(ctx context.Context, s *Server, hook string, body []byte) {
	deadline := time.Now().Add(h.opts.RetryFor)
	delay := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		status, err := h.post(ctx, hook, body)
		if err == nil && status < 300 {
			return
		}
		retry := err != nil || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
		if !retry || time.Now().Add(delay).After(deadline) {
			s.opts.Logger.Warn("run webhook not delivered", "attempts", attempt, "status", status, "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay/2 + rand.N(delay/2+1)):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

func (h *webhooks) post(ctx context.Context, hook string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	_ = res.Body.Close()
	return res.StatusCode, nil
}

// close stops the deliveries in flight and waits for them.
func (h *webhooks) close() {
	h.stop()
	h.wg.Wait()
}
