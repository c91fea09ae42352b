package remote

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"agentd/internal/errdefs"
	"agentd/internal/netguard"
)

// newHTTPClient is the one HTTP client a peer is reached through: its
// dialer applies the private-address rule, every request carries the
// configured headers, and every response body is capped. It has no
// overall timeout, since a stream lasts as long as the peer's task; the
// dial and the response headers are bounded instead, and unary calls by
// their context.
func newHTTPClient(c Config) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would hide the address the dialer checks
		DialContext:           netguard.Dialer(c.Timeout, c.AllowPrivate).DialContext,
		TLSHandshakeTimeout:   c.Timeout,
		ResponseHeaderTimeout: c.Timeout,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		// A client span per request, and the run's trace context to the
		// peer in traceparent (OpenTelemetry's global provider and
		// propagator, no-ops unless tracing is on).
		Transport: otelhttp.NewTransport(&peerTransport{base: tr, headers: c.Headers, max: c.MaxResponseBytes},
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "a2a " + r.Method + " " + r.URL.Path })),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errdefs.Validationf("peer: stopped after %d redirects", len(via))
			}
			return nil
		},
	}
}

// peerTransport adds the peer's headers and caps response bodies.
type peerTransport struct {
	base    *http.Transport
	headers map[string]string
	max     int64
}

func (t *peerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// cappedBody fails a read past max bytes rather than truncating silently.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errdefs.Validationf("peer response exceeds %d bytes", b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if err == nil && b.left <= 0 {
		// The body may end exactly at the cap: look one byte further.
		var one [1]byte
		if m, _ := b.rc.Read(one[:]); m > 0 {
			return n, fmt.Errorf("peer response exceeds %d bytes: %w", b.max, errdefs.Validationf("response too large"))
		}
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
