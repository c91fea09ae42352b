package event

import (
	"context"
	"time"
)

// Bus delivers envelopes from publishers to the subscriptions whose pattern
// matches the envelope's subject. Implementations are safe for concurrent use.
type Bus interface {
	// Publish delivers env to every matching subscription. It never blocks
	// on a slow subscriber unless that subscriber chose OverflowBlock, and
	// then at most for that subscriber's timeout.
	Publish(ctx context.Context, env Envelope) error
	// Subscribe registers a subscription; it receives envelopes published
	// after Subscribe returns. The subscription ends when ctx is done, when
	// Close is called on it, or when the bus closes.
	Subscribe(ctx context.Context, pattern Pattern, opts ...SubOption) (Subscription, error)
	// Close stops the bus: later publishes fail, every subscription's
	// channel is closed.
	Close() error
}

// Subscription is one consumer's view of a Bus.
type Subscription interface {
	// C yields matching envelopes in publish order; it is closed when the
	// subscription ends.
	C() <-chan Envelope
	// Err says why the subscription ended: nil while open or after a plain
	// Close, ErrDetached (wrapped with the reason) after an overflow under
	// OverflowDetach, ErrBusClosed after the bus closed, ctx.Err() after the
	// subscribe context ended.
	Err() error
	// Close ends the subscription; it is idempotent.
	Close() error
}

// Overflow says what a subscription does when its buffer is full.
type Overflow int

// The overflow policies.
const (
	// OverflowDropOldest discards the oldest buffered envelope to make room
	// (the default: live views prefer fresh data).
	OverflowDropOldest Overflow = iota
	// OverflowDropNewest discards the envelope being published.
	OverflowDropNewest
	// OverflowBlock makes Publish wait for room, at most BlockTimeout; after
	// that the envelope is dropped for this subscriber.
	OverflowBlock
	// OverflowDetach ends the subscription with ErrDetached so the
	// subscriber knows it missed events and can catch up elsewhere.
	OverflowDetach
)

// SubOption configures a subscription.
type SubOption func(*SubConfig)

// SubConfig is the resolved configuration of a subscription. Bus
// implementations build it with ApplySubOptions.
type SubConfig struct {
	BufferSize   int
	Overflow     Overflow
	BlockTimeout time.Duration
	// Filter, when set, drops envelopes it returns false for before they are
	// buffered.
	Filter func(Envelope) bool
}

// Defaults for SubConfig.
const (
	DefaultBufferSize   = 256
	DefaultBlockTimeout = time.Second
)

// ApplySubOptions resolves opts over the defaults.
func ApplySubOptions(opts ...SubOption) SubConfig {
	c := SubConfig{BufferSize: DefaultBufferSize, Overflow: OverflowDropOldest, BlockTimeout: DefaultBlockTimeout}
	for _, o := range opts {
		o(&c)
	}
	if c.BufferSize < 1 {
		c.BufferSize = 1
	}
	return c
}

// WithBufferSize bounds the subscription's buffer (minimum 1).
func WithBufferSize(n int) SubOption { return func(c *SubConfig) { c.BufferSize = n } }

// WithOverflow picks the overflow policy; timeout applies to OverflowBlock.
func WithOverflow(o Overflow, timeout time.Duration) SubOption {
	return func(c *SubConfig) {
		c.Overflow = o
		if timeout > 0 {
			c.BlockTimeout = timeout
		}
	}
}

// WithFilter drops envelopes for which keep returns false.
func WithFilter(keep func(Envelope) bool) SubOption {
	return func(c *SubConfig) { c.Filter = keep }
}
