package governor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/netguard"
)

// maxAnswer caps a governor's answer: a verdict and a reason.
const maxAnswer = 64 << 10

// Client reviews proposed calls at one governor URL.
type Client struct {
	url  string
	http *http.Client
}

var _ loop.Governor = (*Client)(nil)

// New returns the client of the governor at rawURL (http or https).
// allowPrivate lets it reach loopback and private addresses; timeout
// bounds connecting (each review is bounded by its context).
func New(rawURL string, timeout time.Duration, allowPrivate bool) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errdefs.Validationf("governor url %q: want an absolute http(s) URL", rawURL)
	}
	tr := &http.Transport{
		Proxy:               nil, // a proxy would hide the address the dialer checks
		DialContext:         netguard.Dialer(timeout, allowPrivate).DialContext,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Client{url: u.String(), http: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Review posts p and reads the verdict. Any answer but a 2xx with a JSON
// verdict is an error; the loop decides what an error means.
func (c *Client) Review(ctx context.Context, p loop.Proposal) (loop.Review, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return loop.Review{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return loop.Review{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return loop.Review{}, ctx.Err()
		}
		return loop.Review{}, errdefs.NotAvailablef("governor unreachable: %v", unwrapURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil:
		return loop.Review{}, errdefs.NotAvailablef("governor answer: %v", err)
	case resp.StatusCode/100 != 2:
		return loop.Review{}, errdefs.NotAvailablef("governor answered HTTP %d", resp.StatusCode)
	case len(b) > maxAnswer:
		return loop.Review{}, errdefs.Validationf("governor answer is larger than %d bytes", maxAnswer)
	}
	var rv loop.Review
	if err := json.Unmarshal(b, &rv); err != nil {
		return loop.Review{}, errdefs.Validationf("governor answer is not {\"verdict\": …}: %v", err)
	}
	return rv, nil
}

// unwrapURL drops *url.Error's method and URL from a transport error: the
// reason is what a reader can act on.
func unwrapURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return fmt.Errorf("%w", ue.Err)
	}
	return err
}
