package remote

import (
	"sync"
	"time"

	"agentd/internal/errdefs"
)

// breaker fails calls to a dead peer fast: after `failures` consecutive
// failures to reach it, the circuit opens for `cooldown`; then one trial
// call is let through (half-open), whose outcome closes or reopens it.
// Only failures to reach the peer count (errdefs NotAvailable and
// Timeout); a peer that answers, even with an error, is alive.
type breaker struct {
	failures int
	cooldown time.Duration
	now      func() time.Time

	mu        sync.Mutex
	count     int
	openUntil time.Time
	trial     bool // a half-open trial is under way
}

// allow returns nil when a call may go ahead, else a NotAvailable error
// saying until when the circuit stays open.
func (b *breaker) allow(peer string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.count < b.failures {
		return nil
	}
	now := b.now()
	if now.Before(b.openUntil) || b.trial {
		return errdefs.NotAvailablef("peer %s: circuit open after %d consecutive failures, failing fast until %s",
			peer, b.count, b.openUntil.UTC().Format(time.RFC3339))
	}
	b.trial = true
	return nil
}

// record notes a call's outcome.
func (b *breaker) record(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trial = false
	if err == nil || !unreachable(err) {
		b.count = 0
		return
	}
	b.count++
	if b.count >= b.failures {
		b.openUntil = b.now().Add(b.cooldown)
	}
}

func unreachable(err error) bool {
	return errdefs.IsNotAvailable(err) || errdefs.IsTimeout(err)
}
