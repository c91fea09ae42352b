package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// defaultExpiredLimit bounds ExpiredLeases when limit is 0.
const defaultExpiredLimit = 100

// Held leases are kept in Store.leases. Releasing one moves its generation
// to Store.released, so that the next owner's generation is higher than
// every earlier one's. A finished run keeps that number until it is
// forgotten — a number rather than a lease, so that retained runs cost
// little — and ExpiredLeases scans held leases only.

// AcquireLease claims runID for owner until now+ttl when it is unleased,
// released, expired or already owner's. An extended lease keeps its
// tenant; a lease changing hands records the acquiring context's.
func (s *Store) AcquireLease(ctx context.Context, runID, owner string, ttl time.Duration) (store.Lease, error) {
	if err := live(ctx); err != nil {
		return store.Lease{}, err
	}
	if runID == "" || owner == "" || ttl <= 0 {
		return store.Lease{}, errdefs.Validationf("acquire lease of run %q for %q: run id, owner and a positive ttl (got %v) are required", runID, owner, ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.nextLease(runID, owner, run.TenantFrom(ctx), ttl, now())
	if err != nil {
		return store.Lease{}, err
	}
	s.putLease(l)
	return l, nil
}

// nextLease is AcquireLease's decision, for AcquireLease and for a Change
// that claims a lease: the lease owner would hold, or Conflict. Callers
// hold s.mu.
func (s *Store) nextLease(runID, owner, tenant string, ttl time.Duration, now time.Time) (store.Lease, error) {
	l, held := s.leases[runID]
	switch {
	case !held:
		l = store.Lease{RunID: runID, Owner: owner, Generation: s.released[runID] + 1, Tenant: tenant}
	case l.Owner == owner:
		// Extending one's own lease keeps its generation and tenant.
	case !now.Before(l.ExpiresAt):
		l.Owner = owner
		l.Generation++
		l.Tenant = tenant
	default:
		return store.Lease{}, errdefs.Conflictf("acquire lease of run %q for %q: held by %q until %v", runID, owner, l.Owner, l.ExpiresAt)
	}
	l.ExpiresAt = now.Add(ttl)
	return l, nil
}

// putLease records a held lease (a released lease's generation lives on
// in it). Callers hold s.mu for writing.
func (s *Store) putLease(l store.Lease) {
	s.leases[l.RunID] = l
	delete(s.released, l.RunID)
}

// RenewLease extends l until now+ttl unless it was released or taken over.
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if err := live(ctx); err != nil {
		return store.Lease{}, err
	}
	if ttl <= 0 {
		return store.Lease{}, errdefs.Validationf("renew lease of run %q for %q: ttl %v is not positive", l.RunID, l.Owner, ttl)
	}
	now := now()
	s.mu.Lock()
	defer s.mu.Unlock()
	held, ok := s.held(l)
	if !ok {
		return store.Lease{}, errdefs.Conflictf("renew lease of run %q for %q (generation %d): the lease was lost", l.RunID, l.Owner, l.Generation)
	}
	held.ExpiresAt = now.Add(ttl)
	s.leases[l.RunID] = held
	return held, nil
}

// RenewLeases extends each lease of ls still held as it says and returns
// those, with their tasks' cancel requests and pending signals.
func (s *Store) RenewLeases(ctx context.Context, ls []store.Lease, ttl time.Duration) ([]store.RenewedLease, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	if ttl <= 0 {
		return nil, errdefs.Validationf("renew leases: ttl %v is not positive", ttl)
	}
	now := now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]store.RenewedLease, 0, len(ls))
	for _, l := range ls {
		held, ok := s.held(l)
		if !ok {
			continue
		}
		held.ExpiresAt = now.Add(ttl)
		s.leases[l.RunID] = held
		rl := store.RenewedLease{Lease: held}
		if t := s.tenants[held.Tenant]; t != nil {
			if rec := t.task(l.RunID); rec != "" {
				task := readTask(rec)
				rl.CancelRequested, rl.Signals = task.CancelRequested, task.Signals
			}
		}
		out = append(out, rl)
	}
	return out, nil
}

// ReleaseLease gives l up; a lost lease is left alone.
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	if err := live(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(l)
	return nil
}

// releaseLocked gives l up if it is still held. Callers hold s.mu.
func (s *Store) releaseLocked(l store.Lease) {
	if held, ok := s.held(l); ok {
		delete(s.leases, l.RunID)
		s.released[l.RunID] = held.Generation
	}
}

// held returns the record of l and true if l is still held. Callers hold
// s.mu.
func (s *Store) held(l store.Lease) (store.Lease, bool) {
	held, ok := s.leases[l.RunID]
	return held, ok && held.Owner == l.Owner && held.Generation == l.Generation
}

// ExpiredLeases lists up to limit held leases that expired before now,
// the earliest expiry first.
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]store.Lease, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	switch {
	case limit < 0:
		return nil, errdefs.Validationf("expired leases: negative limit %d", limit)
	case limit == 0:
		limit = defaultExpiredLimit
	}
	s.mu.RLock()
	var out []store.Lease
	for _, l := range s.leases {
		if l.ExpiresAt.Before(now) {
			out = append(out, l)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Lease) int {
		return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.RunID, b.RunID))
	})
	return out[:min(limit, len(out))], nil
}
