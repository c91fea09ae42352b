package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// defaultExpiredLimit bounds ExpiredLeases when limit is 0.
const defaultExpiredLimit = 100

// leaseRecord is a run's lease. A released lease keeps its record so that
// the next owner's generation is higher than every earlier one's.
type leaseRecord struct {
	lease    store.Lease
	released bool
}

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
	now := now()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.leases[runID]
	switch {
	case rec == nil:
		rec = &leaseRecord{lease: store.Lease{RunID: runID, Owner: owner, Generation: 1, Tenant: store.TenantFrom(ctx)}}
		s.leases[runID] = rec
	case !rec.released && rec.lease.Owner == owner:
		// Extending one's own lease keeps its generation and tenant.
	case rec.released || !now.Before(rec.lease.ExpiresAt):
		rec.lease.Owner = owner
		rec.lease.Generation++
		rec.lease.Tenant = store.TenantFrom(ctx)
	default:
		return store.Lease{}, errdefs.Conflictf("acquire lease of run %q for %q: held by %q until %v", runID, owner, rec.lease.Owner, rec.lease.ExpiresAt)
	}
	rec.released = false
	rec.lease.ExpiresAt = now.Add(ttl)
	return rec.lease, nil
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
	rec := s.leases[l.RunID]
	if !rec.holds(l) {
		return store.Lease{}, errdefs.Conflictf("renew lease of run %q for %q (generation %d): the lease was lost", l.RunID, l.Owner, l.Generation)
	}
	rec.lease.ExpiresAt = now.Add(ttl)
	return rec.lease, nil
}

// ReleaseLease gives l up; a lost lease is left alone.
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	if err := live(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.leases[l.RunID]; rec.holds(l) {
		rec.released = true
	}
	return nil
}

// holds reports whether rec is l, still held.
func (rec *leaseRecord) holds(l store.Lease) bool {
	return rec != nil && !rec.released && rec.lease.Owner == l.Owner && rec.lease.Generation == l.Generation
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
	for _, rec := range s.leases {
		if !rec.released && rec.lease.ExpiresAt.Before(now) {
			out = append(out, rec.lease)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Lease) int {
		return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.RunID, b.RunID))
	})
	return out[:min(limit, len(out))], nil
}
