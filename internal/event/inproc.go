package event

import (
	"context"
	"fmt"
	"sync"

	"agentd/internal/errdefs"
)

// InProc is the in-process Bus: publishers hand envelopes straight to the
// buffered channels of matching subscriptions, found through a token-trie
// index. It starts no goroutines. The zero value is not usable; call
// NewInProc.
//
// Locks, and the order they are taken in:
//
//   - InProc.mu guards the index and the closed flag. Publish holds it for
//     reading only while it collects the matching subscriptions; Subscribe,
//     subscription removal and Close hold it for writing, briefly.
//   - subscription.mu guards a subscription's channel against being closed
//     during a send: senders hold it for reading, the closer for writing.
//
// The two are never held together: Publish releases InProc.mu before it
// delivers, and a subscription releases its mu before it leaves the index.
// No lock is held while a Filter runs. So no lock cycle can form, and a
// subscriber that blocks (OverflowBlock) delays only the publishers that
// reach it, never Subscribe, Close or publishes to other subscriptions.
//
// Shutdown, in two phases:
//
//  1. Under InProc.mu: set closed, so every later Publish and Subscribe
//     fails with ErrBusClosed, and take the whole index.
//  2. Without the bus lock: end each taken subscription with ErrBusClosed
//     (see subscription for its own sequence). A Publish that collected its
//     matches before phase 1 may still be delivering; closing each channel
//     waits for its in-flight send, and publishers waiting for room under
//     OverflowBlock are released at once.
//
// When Close returns every channel is closed and no send can follow.
type InProc struct {
	mu     sync.RWMutex
	idx    index
	closed bool

	closeOnce sync.Once
	// matches recycles the per-publish list of matching subscriptions, so
	// that a publish allocates nothing, whatever its fan-out.
	matches sync.Pool
}

var _ Bus = (*InProc)(nil)

// NewInProc returns an open in-process bus.
func NewInProc() *InProc {
	b := &InProc{}
	b.matches.New = func() any { return new([]*subscription) }
	return b
}

// Publish implements Bus. It delivers to each matching subscription before
// returning, so envelopes published by one goroutine reach every subscription
// in publish order. ctx bounds only the waits for OverflowBlock subscribers;
// when it ends during one, the remaining subscriptions are still offered env
// and Publish returns ctx's error.
func (b *InProc) Publish(ctx context.Context, env Envelope) error {
	if err := env.Subject.Valid(); err != nil {
		return err
	}
	list := b.matches.Get().(*[]*subscription)
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		b.matches.Put(list)
		return fmt.Errorf("event: publish %q: %w", env.Subject, ErrBusClosed)
	}
	matched := b.idx.collect(env.Subject, (*list)[:0])
	b.mu.RUnlock()

	var err error
	for _, s := range matched {
		if e := s.deliver(ctx, env); e != nil && err == nil {
			err = fmt.Errorf("event: publish %q: %w", env.Subject, e)
		}
	}
	clear(matched) // the pool must not keep ended subscriptions alive
	*list = matched[:0]
	b.matches.Put(list)
	return err
}

// Subscribe implements Bus. The pattern must be valid and the overflow
// policy one of the declared ones (Validation otherwise); a BlockTimeout
// that is not positive means DefaultBlockTimeout. The subscription's buffer
// is allocated here, in full: size it for the consumer.
func (b *InProc) Subscribe(ctx context.Context, pattern Pattern, opts ...SubOption) (Subscription, error) {
	if err := pattern.Valid(); err != nil {
		return nil, err
	}
	cfg := ApplySubOptions(opts...)
	if cfg.Overflow < OverflowDropOldest || cfg.Overflow > OverflowDetach {
		return nil, errdefs.Validationf("event: subscribe %q: unknown overflow policy %d", pattern, cfg.Overflow)
	}
	if cfg.BlockTimeout <= 0 {
		cfg.BlockTimeout = DefaultBlockTimeout
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("event: subscribe %q: %w", pattern, err)
	}

	s := newSubscription(b, pattern, cfg)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("event: subscribe %q: %w", pattern, ErrBusClosed)
	}
	b.idx.add(s)
	b.mu.Unlock()
	s.watch(ctx)
	return s, nil
}

// Close implements Bus; it is idempotent, and concurrent calls return once
// the bus is fully closed. It always returns nil.
func (b *InProc) Close() error {
	b.closeOnce.Do(b.shutdown)
	return nil
}

// shutdown runs the two phases described on InProc.
func (b *InProc) shutdown() {
	b.mu.Lock()
	b.closed = true
	subs := b.idx.all(nil)
	b.idx = index{}
	b.mu.Unlock()

	for _, s := range subs {
		s.terminate(ErrBusClosed)
	}
}

// Len returns the number of open subscriptions (for metrics and tests).
func (b *InProc) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.idx.size
}

// remove takes an ending subscription out of the index. After Close the
// index is gone already, and so is s.
func (b *InProc) remove(s *subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.idx.remove(s)
	}
}
