package remote

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"agentd/internal/errdefs"
)

// cardCache holds the peer's card. A card younger than ttl is used as is;
// an older one is revalidated with If-None-Match, so an unchanged card
// costs a 304. Concurrent attempts share one fetch.
type cardCache struct {
	client *http.Client
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	url     string
	card    *a2a.AgentCard
	etag    string
	checked time.Time
}

// get returns the card at cardURL, fetching or revalidating it as needed.
func (c *cardCache) get(ctx context.Context, cardURL string) (*a2a.AgentCard, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.url != cardURL {
		c.url, c.card, c.etag = cardURL, nil, ""
	}
	if c.card != nil && c.now().Sub(c.checked) < c.ttl {
		return c.card, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, errdefs.Validationf("peer card %s: %v", cardURL, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.card != nil && c.etag != "" {
		req.Header.Set("If-None-Match", c.etag)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, classifyTransport(ctx, "fetch the peer's card "+cardURL, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && c.card != nil:
		c.checked = c.now()
		return c.card, nil
	case resp.StatusCode != http.StatusOK:
		return nil, errdefs.NotAvailablef("peer card %s: HTTP %d", cardURL, resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, classifyTransport(ctx, "read the peer's card "+cardURL, err)
	}
	card, err := parseCard(body)
	if err != nil {
		return nil, errdefs.Validationf("peer card %s: %v", cardURL, err)
	}
	c.card, c.etag, c.checked = card, resp.Header.Get("ETag"), c.now()
	return card, nil
}

// parseCard reads a v1.0 card, or a v0.3 one through a2a-go's
// compatibility parser.
func parseCard(body []byte) (*a2a.AgentCard, error) {
	var card a2a.AgentCard
	if err := json.Unmarshal(body, &card); err == nil && len(card.SupportedInterfaces) > 0 {
		return &card, nil
	}
	compat, err := a2av0.NewAgentCardParser()(body)
	if err != nil {
		return nil, err
	}
	if len(compat.SupportedInterfaces) == 0 {
		return nil, errdefs.Validationf("the card lists no interface")
	}
	return compat, nil
}
