package pgstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"agentd/internal/run"
	"agentd/internal/store"
)

// Group commit: the Applies that arrive while the store's transactions are
// in flight wait, and the next transaction writes them all — one round
// trip, one commit and one WAL flush for many changes, where each used to
// cost its own. A change waits at most for the transactions in flight
// (maxGroups of them) to return; alone, it goes at once.
//
// A transaction of several changes that fails on one change's guard (a
// Conflict, a duplicate key) is written again without that change, which
// is then written alone for its own answer: each change gets the outcome
// it would have had written by itself, in some order of the concurrent
// changes. A transaction whose outcome is unknown is unknown for every
// change in it.

const (
	// maxGroups bounds the transactions in flight at once: two keep both
	// of a small server's cores busy while the next group gathers. (On 2
	// cores, 32 blocking clients: one in flight 730 req/s, two 980, four
	// 870 with a worse p99 — docs/benchmarks.md.)
	maxGroups = 2
	// maxGroup bounds the changes in one transaction.
	maxGroup = 64
	// groupTimeout bounds a group's transaction: it is written for many
	// callers, so no single caller's context may cancel it.
	groupTimeout = 30 * time.Second
)

// member is one Apply's change in a group.
type member struct {
	p       *plan
	granted store.Lease // the lease claim's answer
	stored  run.Task    // the created or updated task's answer, when asked for

	// Guarded by committer.mu.
	leading  bool // handed a group to write
	finished bool
	err      error

	wake chan struct{} // signalled when leading or finished
}

// committer gathers Applies into groups.
type committer struct {
	s *Store

	mu      sync.Mutex
	queue   []*member
	leaders int // groups being written
}

// apply writes p with whatever else is waiting, and returns its outcome.
func (c *committer) apply(ctx context.Context, p *plan) error {
	m := &member{p: p, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, m)
	if c.leaders < maxGroups {
		c.leaders++
		m.leading = true
		signal(m)
	}
	c.mu.Unlock()
	for {
		<-m.wake
		c.mu.Lock()
		lead, finished := m.leading, m.finished
		m.leading = false
		c.mu.Unlock()
		if lead {
			c.lead(ctx)
		}
		if finished {
			return m.err
		}
	}
}

// lead writes the changes waiting now as one group, then hands the lead
// to a change that arrived meanwhile, or gives it up.
func (c *committer) lead(ctx context.Context) {
	c.mu.Lock()
	n := min(len(c.queue), maxGroup)
	group := slices.Clone(c.queue[:n])
	c.queue = slices.Delete(c.queue, 0, n)
	c.mu.Unlock()
	if len(group) > 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), groupTimeout)
		c.write(ctx, group)
		cancel()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, next := range c.queue {
		if !next.leading {
			next.leading = true
			signal(next)
			return
		}
	}
	c.leaders--
}

// write writes group in one transaction, retrying what surely did not
// commit, and gives every member its outcome (see the top of this file).
func (c *committer) write(ctx context.Context, group []*member) {
	err := c.s.retry(ctx, func(ctx context.Context) error { return c.s.send(ctx, group) })
	var pe *pgconn.PgError
	guard := errors.As(err, &pe) && pe.Code == checkFailed
	failed := -1
	if guard {
		failed = failedMember(group, pe)
	}
	switch {
	case err == nil:
		c.finish(group, nil)
	case len(group) == 1 && guard:
		c.finish(group, c.s.classify("apply", c.s.explain(ctx, group[0].p, pe)))
	case len(group) == 1, errors.Is(err, ErrCommitUnknown):
		c.finish(group, c.s.classify("apply", err))
	case failed >= 0:
		c.write(ctx, slices.Delete(slices.Clone(group), failed, failed+1))
		c.write(ctx, group[failed:failed+1])
	default:
		for i := range group { // which change the error is about is unknown
			c.write(ctx, group[i:i+1])
		}
	}
}

// finish gives each member of group the outcome err.
func (c *committer) finish(group []*member, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range group {
		m.finished, m.err = true, err
		signal(m)
	}
}

// signal wakes m's Apply (a wake-up pending already will do).
func signal(m *member) {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// failedMember returns the index of the first member of group whose
// change holds the guard that failed (pe, from agentd_check), or -1. The
// statements ran in the members' order, so the first that holds it
// failed first.
func failedMember(group []*member, pe *pgconn.PgError) int {
	return slices.IndexFunc(group, func(m *member) bool { return m.p.guards(pe.Message, pe.Detail) })
}
