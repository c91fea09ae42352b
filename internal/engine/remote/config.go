package remote

import (
	"net/url"
	"time"

	"agentd/internal/errdefs"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 16 << 20
	DefaultBreakerFailures  = 5
	DefaultBreakerCooldown  = 30 * time.Second
	DefaultCardTTL          = time.Minute
)

// Config declares one remote agent.
type Config struct {
	// AgentID is the local agent's id; it names the step in events.
	AgentID string
	// Peer is the URL of the peer's agent card. A relative URL ("/agents/
	// echo/.well-known/agent-card.json") is resolved against Base.
	Peer string
	// Base returns the URL a relative Peer is resolved against — the
	// server's own address, known only once it listens. Nil with a
	// relative Peer is a configuration error.
	Base func() string
	// Headers are sent with every request to the peer (its card
	// included): the credentials, read from the environment by the
	// caller.
	Headers map[string]string
	// AllowPrivate permits loopback, private and link-local peers, which
	// are otherwise refused after DNS resolution (netguard).
	AllowPrivate bool
	// Timeout bounds connecting, the card fetch, unary calls and the
	// wait for a stream's response headers (default DefaultTimeout). A
	// stream itself runs as long as the peer's task does.
	Timeout time.Duration
	// MaxResponseBytes caps each response body from the peer, a stream's
	// whole body included (default DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// BreakerFailures consecutive failures to reach the peer open its
	// circuit for BreakerCooldown: calls then fail at once
	// (defaults DefaultBreakerFailures, DefaultBreakerCooldown).
	BreakerFailures int
	BreakerCooldown time.Duration
	// CardTTL is how long a fetched card is used before it is
	// revalidated (with its ETag) (default DefaultCardTTL).
	CardTTL time.Duration
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.BreakerFailures <= 0 {
		c.BreakerFailures = DefaultBreakerFailures
	}
	if c.BreakerCooldown <= 0 {
		c.BreakerCooldown = DefaultBreakerCooldown
	}
	if c.CardTTL <= 0 {
		c.CardTTL = DefaultCardTTL
	}
	return c
}

// Validate checks the peer URL's shape: absolute http(s), or a path when
// a Base is given.
func (c Config) Validate() error {
	if c.Peer == "" {
		return errdefs.Validationf("peer: missing (the URL of the peer's agent card)")
	}
	u, err := url.Parse(c.Peer)
	if err != nil {
		return errdefs.Validationf("peer %q: %v", c.Peer, err)
	}
	if u.IsAbs() {
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return errdefs.Validationf("peer %q: want an http or https URL", c.Peer)
		}
		return nil
	}
	if c.Base == nil {
		return errdefs.Validationf("peer %q: a relative URL needs the server's own address", c.Peer)
	}
	return nil
}

// cardURL is Peer, resolved against Base when relative.
func (c Config) cardURL() (string, error) {
	u, err := url.Parse(c.Peer)
	if err != nil {
		return "", errdefs.Validationf("peer %q: %v", c.Peer, err)
	}
	if u.IsAbs() {
		return u.String(), nil
	}
	if c.Base == nil {
		return "", errdefs.Validationf("peer %q: a relative URL needs the server's own address", c.Peer)
	}
	base, err := url.Parse(c.Base())
	if err != nil || !base.IsAbs() {
		return "", errdefs.NotAvailablef("peer %q: the server's own address %q is not known yet", c.Peer, c.Base())
	}
	return base.ResolveReference(u).String(), nil
}
