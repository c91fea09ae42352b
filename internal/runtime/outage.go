package runtime

import (
	"context"
	"errors"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Outages. A store that is briefly unreachable (a database restart, a
// network blip) must cost no run its progress, and a replica that is gone
// for good must not keep its runs. The rule, per run:
//
//   - The owner keeps executing while the store is unreachable. Live
//     events wait in the run's log in memory and are retried (runlog's
//     flusher); once MaxBacklog of them wait, the engine's Publish blocks
//     until they are durable — back-pressure, never a dropped event. The
//     final commit is retried too.
//   - The owner gives a run up once the store has stayed unreachable for
//     longer than the outage bound after the run's lease expired: it stops
//     the attempt and writes nothing more (its writes are fenced by the
//     lease anyway). The lease is renewed, first, by its owner when the
//     store returns (RenewLeases renews an expired lease nobody took).
//   - Another replica's sweep takes an expired lease over at once only
//     when the owner does not answer (OwnerProbe: dead, frozen, or cut off
//     from the others) or answers that it no longer executes the run; an
//     owner that answers that it does keeps the run until the lease has
//     been expired for longer than the bound. The database alone cannot
//     tell a replica cut off from it from a dead one; the replicas can
//     ask one another.

// Defaults of the outage policy.
const (
	// DefaultOutageBound is how long an unreachable store may keep a
	// run's lease from being renewed before its owner gives it up.
	DefaultOutageBound = 30 * time.Second
	// DefaultMaxBacklog is how many of a run's events may wait in memory
	// for the store before the engine's Publish blocks.
	DefaultMaxBacklog = 10000
)

// OwnerProbe asks another replica whether it still executes a run; the
// sweep asks before it takes an expired lease over.
type OwnerProbe interface {
	// Executes reports what replica owner answers about run runID; an
	// error means it gave no answer (it is gone, or cannot be reached),
	// and a replica that answers under another name is not owner.
	Executes(ctx context.Context, owner, runID string) (bool, error)
}

// outagePolicy is the runtime's outage settings (see Options).
type outagePolicy struct {
	bound      time.Duration
	owners     OwnerProbe
	maxBacklog int
}

func newOutagePolicy(o Options) outagePolicy {
	p := outagePolicy{bound: o.OutageBound, owners: o.Owners, maxBacklog: o.MaxBacklog}
	if p.bound <= 0 {
		p.bound = DefaultOutageBound
	}
	if p.maxBacklog <= 0 {
		p.maxBacklog = DefaultMaxBacklog
	}
	return p
}

// Executes reports whether run runID executes (or waits to) on this
// replica and has not been given up: the answer to another replica's
// OwnerProbe.
func (r *Runtime) Executes(runID string) bool {
	r.mu.Lock()
	x := r.runs[runID]
	r.mu.Unlock()
	if x == nil {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lostErr == nil
}

// probeRound asks the owners of one sweep's expired leases; an owner that
// did not answer is not asked again in the round, so that a frozen
// replica's runs are all taken over in one round rather than one probe
// timeout after another.
type probeRound struct {
	r      *Runtime
	silent map[string]bool
}

func (r *Runtime) probeRound() *probeRound { return &probeRound{r: r} }

// ownerKeeps reports whether expired lease l stays with its owner for now:
// the lease expired less than the outage bound ago and the owner answers
// that it still executes the run (see the rule above).
func (p *probeRound) ownerKeeps(ctx context.Context, l store.Lease) bool {
	r := p.r
	if r.outage.owners == nil || l.Owner == "" || l.Owner == r.replica || p.silent[l.Owner] || time.Since(l.ExpiresAt) > r.outage.bound {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, min(r.leaseTTL/2, time.Second))
	defer cancel()
	executes, err := r.outage.owners.Executes(pctx, l.Owner, l.RunID)
	if err != nil {
		if p.silent == nil {
			p.silent = map[string]bool{}
		}
		p.silent[l.Owner] = true
		r.log.Info("expired lease's owner does not answer; taking its runs over", "run_id", l.RunID, "owner", l.Owner, "err", err)
		return false
	}
	if executes {
		r.log.Debug("expired lease left to its owner, which still executes the run", "run_id", l.RunID, "owner", l.Owner,
			"expired_for", time.Since(l.ExpiresAt))
	}
	return executes
}

// giveUpLapsed stops the attempts among xs whose lease expired more than
// the outage bound ago: the store stayed unreachable that long, and
// another replica may take the run over now.
func (r *Runtime) giveUpLapsed(xs []*execution) {
	for _, x := range xs {
		x.mu.Lock()
		l := x.leaseLocked()
		x.mu.Unlock()
		if l.RunID != "" && time.Since(l.ExpiresAt) > r.outage.bound {
			x.giveUp()
		}
	}
}

// outageExceeded is why an attempt is given up after the outage bound.
func (r *Runtime) outageExceeded(runID string) error {
	return errdefs.NotAvailablef("the store stayed unreachable for longer than the outage bound (%v) after run %s's lease expired; the run is left to another replica", r.outage.bound, runID)
}

// awaitBacklog holds the engine back while the run's log holds more events
// than the store has taken (an outage) beyond the cap, until they are
// durable or the attempt stops.
func (x *execution) awaitBacklog(ctx context.Context) error {
	if ctx == nil {
		ctx = x.ctx
	}
	return x.log.WaitBacklog(ctx, x.r.outage.maxBacklog)
}

// finishContext is the context of the attempt's final commit: it retries
// while the store is unreachable, but not beyond the outage bound after
// the lease's expiry — then another replica may hold the run.
func (x *execution) finishContext() (context.Context, context.CancelFunc) {
	x.mu.Lock()
	l := x.leaseLocked()
	x.mu.Unlock()
	if l.RunID == "" {
		return x.bg, func() {} // nothing to bound: no lease to outlive
	}
	return context.WithDeadline(x.bg, l.ExpiresAt.Add(x.r.outage.bound))
}

// noteFinishLapsed records, after a failed final commit under ctx
// (finishContext), that the outage bound passed: the attempt is given up.
func (x *execution) noteFinishLapsed(ctx context.Context) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		x.giveUp()
	}
}

// giveUp stops the attempt after the outage bound and fences its log off
// with a lease no store holds: the events it still holds in memory are
// refused when the store is back, like every write of a replica that lost
// its lease, so that the owner writes nothing more — not even before
// another replica took the lease (a write already in flight may land
// still; the lease it carries fences it as always). The log's next
// attempt here takes its own fence (runlog's activate).
func (x *execution) giveUp() {
	x.abandon(x.r.outageExceeded(x.runID))
	x.log.SetFence(store.Lease{RunID: x.runID, Owner: x.r.replica, Generation: -1})
}

// givenUp is why the attempt was given up (the run is someone else's, or
// the outage bound passed), or nil.
func (x *execution) givenUp() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lostErr
}
