package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
)

// Client is an llm.Provider for one OpenAI-compatible endpoint. It is safe
// for concurrent use.
type Client struct {
	cfg Config
	url string
}

var _ llm.Provider = (*Client)(nil)

// New returns a client for cfg. A missing or malformed BaseURL is a
// Validation error.
func New(cfg Config) (*Client, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, errdefs.Validationf("openai: base_url %q: want an http:// or https:// URL", cfg.BaseURL)
	}
	if cfg.HTTPClient != nil && cfg.HTTPClient.Timeout != 0 {
		return nil, errdefs.Validationf("openai: the HTTP client has a %s timeout, which would cut long streams; use IdleTimeout", cfg.HTTPClient.Timeout)
	}
	return &Client{cfg: cfg.withDefaults(), url: base + "/chat/completions"}, nil
}

// Stream sends req and returns its streamed answer once the server has
// accepted it. Failures before that point are retried as Config says;
// failures after it end the stream.
func (c *Client) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	body, model, err := encodeRequest(req, c.cfg.Model)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		s, hint, err := c.attempt(ctx, body, model)
		if err == nil {
			return s, nil
		}
		if !hint.retry || attempt >= c.cfg.MaxRetries {
			return nil, gaveUp(err, attempt)
		}
		wait := hint.after
		if wait > c.cfg.RetryMaxDelay {
			return nil, fmt.Errorf("%w (server asks to retry after %s)", gaveUp(err, attempt), wait.Round(time.Second))
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		if c.cfg.OnRetry != nil {
			c.cfg.OnRetry(attempt+1, wait, err)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func gaveUp(err error, retries int) error {
	if retries == 0 {
		return err
	}
	return fmt.Errorf("%w (after %d retries)", err, retries)
}

// backoff is base·2^attempt capped at RetryMaxDelay, with jitter over its
// upper half so that clients throttled together do not retry together.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.RetryBaseDelay << min(attempt, 30)
	if d <= 0 || d > c.cfg.RetryMaxDelay {
		d = c.cfg.RetryMaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// attempt sends the request once. On success the returned stream owns the
// response, the attempt's context and its watchdog.
func (c *Client) attempt(ctx context.Context, body []byte, model string) (*stream, retryHint, error) {
	actx, cancel := context.WithCancel(ctx)
	wd := newWatchdog(c.cfg.IdleTimeout, cancel)
	fail := func(err error, hint retryHint) (*stream, retryHint, error) {
		wd.stop()
		cancel()
		return nil, hint, err
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fail(errdefs.Validationf("openai: building the request to %s: %w", c.url, err), retryHint{})
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fail(ctx.Err(), retryHint{})
		case wd.fired.Load():
			return fail(wd.err("waiting for a response", c.url), retryHint{retry: true})
		}
		return fail(errdefs.NotAvailablef("openai: POST %s: %w", c.url, err), retryHint{retry: true})
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(idleReader{r: resp.Body, w: wd}, 64<<10))
		resp.Body.Close()
		hint, err := statusError(c.url, model, resp.StatusCode, resp.Header, msg)
		return fail(err, hint)
	}
	wd.kick()
	return newStream(ctx, cancel, resp, wd, c.url), retryHint{}, nil
}
