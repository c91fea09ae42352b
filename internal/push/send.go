package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"

	"agentd/internal/errdefs"
	"agentd/internal/netguard"
)

// Webhook requests.
const (
	// webhookDrain bounds how much of a webhook's answer is read (to reuse
	// the connection); the rest is dropped with the connection.
	webhookDrain = 64 << 10
	// Backoff between attempts: from backoffMin, doubling, up to
	// backoffMax, each with ±50 % jitter.
	backoffMin = 100 * time.Millisecond
	backoffMax = 10 * time.Second
)

// webhookClient posts webhooks: http.Client in production.
type webhookClient interface {
	Do(*http.Request) (*http.Response, error)
	CloseIdleConnections()
}

// newWebhookClient returns the client deliveries share: every connection
// dialled through netguard (a private address is refused at connect time,
// whatever DNS answered when the config was set), redirects not followed
// (a redirect could lead anywhere, the token with it), each attempt
// bounded by opts.Timeout. Each attempt is a client span with the W3C
// traceparent in its request (OpenTelemetry's global provider and
// propagator, no-ops unless tracing is on), a child of the run's trace
// (follower.traced).
func newWebhookClient(opts Options) *http.Client {
	tr := &http.Transport{
		DialContext:           netguard.Dialer(opts.Timeout, opts.AllowPrivate).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   opts.Timeout,
		ResponseHeaderTimeout: opts.Timeout,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		// The provider is named: otelhttp would otherwise take the
		// context span's, and the run's span, extracted from its
		// traceparent, is a remote one whose provider records nothing.
		Transport: otelhttp.NewTransport(tr, otelhttp.WithTracerProvider(otel.GetTracerProvider()),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "webhook " + r.Method })),
		Timeout: opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// send posts body to the webhook until it is taken (2xx), a failure that
// a retry cannot cure (4xx other than 408/429, a refused address), or
// RetryFor has passed, backing off between attempts; with once, it makes
// a single attempt (the webhook's circuit is open: follow.go). It
// returns the number of attempts and the last failure.
func (d *Deliverer) send(ctx context.Context, hook Target, body []byte, once bool) (int, error) {
	deadline := d.clock.now().Add(d.opts.RetryFor)
	wait := backoffMin
	for attempt := 1; ; attempt++ {
		err := d.post(ctx, hook, body)
		if err == nil || once || !retryableDelivery(err) || ctx.Err() != nil {
			return attempt, err
		}
		pause := d.clock.jitter(wait)
		if d.clock.now().Add(pause).After(deadline) {
			return attempt, err
		}
		if err := d.clock.sleep(ctx, pause); err != nil {
			return attempt, err
		}
		wait = min(2*wait, backoffMax)
	}
}

// retryClock is the time and chance send's retries see: the real ones,
// unless a test sets them.
type retryClock struct {
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
	// Rand returns a random duration in [0, n).
	Rand func(n time.Duration) time.Duration
}

func (c retryClock) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c retryClock) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// jitter spreads d by ±50 %, so that webhooks failing together do not
// retry together.
func (c retryClock) jitter(d time.Duration) time.Duration {
	r := rand.N[time.Duration]
	if c.Rand != nil {
		r = c.Rand
	}
	return d/2 + r(d)
}

// webhookStatus is a webhook's non-2xx answer.
type webhookStatus int

func (s webhookStatus) Error() string {
	return fmt.Sprintf("webhook answered %d %s", int(s), http.StatusText(int(s)))
}

// post makes one attempt.
func (d *Deliverer) post(ctx context.Context, hook Target, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return errdefs.Validationf("webhook URL %q: %v", hook.URL, err)
	}
	for k, v := range hook.Header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "agentd")
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, webhookDrain))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return webhookStatus(resp.StatusCode)
	}
	return nil
}

// retryableDelivery reports whether another attempt may succeed: a 5xx, 408 or
// 429, a timeout, a refused or reset connection — not a 4xx the webhook
// meant, a redirect, or an address netguard refuses.
func retryableDelivery(err error) bool {
	var st webhookStatus
	if errors.As(err, &st) {
		return st >= 500 || st == http.StatusRequestTimeout || st == http.StatusTooManyRequests
	}
	if errdefs.ClassOf(err) == errdefs.ClassForbidden || errdefs.ClassOf(err) == errdefs.ClassValidation {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isDialError(err)
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}
