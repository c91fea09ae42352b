package remote

import (
	"sync"
	"time"

	"agentd/internal/errdefs"
)

// breaker fails calls to a dead peer fast: after `failures` consecutive
// failures to reach it, the circuit opens for `cooldown`; then one trial
// call per cooldown is let through (half-open), whose success closes it.
// Only failures to reach the peer count (errdefs NotAvailable and
// Timeout); a peer that answers, even with an error, is alive. A trial
// whose outcome is never recorded (its run was canceled) costs one
// cooldown, never a stuck circuit.
type breaker struct {
	failures int
	cooldown time.Duration
	now      func() time.Time

	mu        sync.Mutex
	count     int
	openUntil time.Time
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
	if now.Before(b.openUntil) {
		return errdefs.NotAvailablef("peer %s: circuit open after %d consecutive failures, failing fast until %s",
			peer, b.count, b.openUntil.UTC().Format(time.RFC3339))
	}
	b.openUntil = now.Add(b.cooldown) // this call is the trial
	return nil
}

// record notes a call's outcome: nil or an answer from the peer closes
// the circuit, a failure to reach it counts.
func (b *breaker) record(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
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
