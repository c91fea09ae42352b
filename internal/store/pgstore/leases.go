package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// Leases are global (not scoped by tenant): recovery scans every tenant's
// expired leases, and run ids are globally unique. Expiries are stamped by
// the store's clock (WithClock), so replicas' clocks must agree to well
// within a lease's TTL.

// AcquireLease claims run for owner until now+ttl when the lease is free
// (never taken, released or expired) or already owner's. One upsert decides
// atomically: its WHERE is the claim condition, evaluated under the row
// lock, so of concurrent claimants exactly one wins. The generation grows
// when the lease changes hands, a release counting as a change. A lease
// its owner extends keeps the tenant it records (the run's): only a lease
// changing hands is tagged with the acquiring context's tenant.
func (s *Store) AcquireLease(ctx context.Context, runID, owner string, ttl time.Duration) (store.Lease, error) {
	if err := checkLease(runID, owner, ttl); err != nil {
		return store.Lease{}, err
	}
	now := s.now()
	l := store.Lease{RunID: runID, Tenant: run.TenantFrom(ctx), Owner: owner, ExpiresAt: now.Add(ttl)}
	var won bool
	err := s.retry(ctx, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, claimLeaseSQL, runID, owner, l.ExpiresAt, now, l.Tenant, ttl.Microseconds()).Scan(&l.Generation, &l.Tenant)
		won = err == nil
		if errNoRows(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return store.Lease{}, s.classify(fmt.Sprintf("acquire lease on run %q for %q", runID, owner), err)
	}
	if !won {
		return store.Lease{}, errdefs.Conflictf("pgstore: lease on run %q is held by another owner than %q", runID, owner)
	}
	return l, nil
}

// claimLeaseSQL is the claim of AcquireLease and of a Change with a lease:
// $1 run, $2 owner, $3 expiry, $4 now, $5 tenant, $6 the TTL in µs. Its
// WHERE is the claim condition, evaluated under the row lock. Another
// owner's expired lease passes only once the server has been up for that
// lease's own TTL (pg_postmaster_start_time, on the database's clock):
// after a restart every lease has expired, and a live owner must get one
// lease period to renew before anyone takes its runs.
const claimLeaseSQL = `
INSERT INTO leases (run_id, tenant, owner, generation, expires_at, ttl_us) VALUES ($1, $5, $2, 1, $3, $6)
ON CONFLICT (run_id) DO UPDATE SET
	generation = CASE WHEN leases.owner = EXCLUDED.owner THEN leases.generation ELSE leases.generation + 1 END,
	owner = EXCLUDED.owner,
	tenant = CASE WHEN leases.owner = EXCLUDED.owner THEN leases.tenant ELSE EXCLUDED.tenant END,
	expires_at = EXCLUDED.expires_at,
	ttl_us = EXCLUDED.ttl_us
WHERE leases.owner = EXCLUDED.owner OR leases.owner = ''
	OR (leases.expires_at <= $4 AND pg_postmaster_start_time() <= clock_timestamp() - leases.ttl_us * interval '1 microsecond')
RETURNING generation, tenant`

// RenewLeases extends, in one statement, every lease of ls still held as
// it says, and reads the cancel requests and pending signals of their runs
// in the same round trip.
func (s *Store) RenewLeases(ctx context.Context, ls []store.Lease, ttl time.Duration) ([]store.RenewedLease, error) {
	if ttl <= 0 {
		return nil, errdefs.Validationf("pgstore: renew leases: ttl %v is not positive", ttl)
	}
	if len(ls) == 0 {
		return nil, nil
	}
	ids, owners, gens := make([]string, len(ls)), make([]string, len(ls)), make([]int64, len(ls))
	for i, l := range ls {
		ids[i], owners[i], gens[i] = l.RunID, l.Owner, l.Generation
	}
	expires := s.now().Add(ttl)
	var out []store.RenewedLease
	err := s.retry(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, renewLeasesSQL, ids, owners, gens, expires, ttl.Microseconds())
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.RenewedLease, error) {
			r := store.RenewedLease{Lease: store.Lease{ExpiresAt: expires}}
			var signals []byte
			err := row.Scan(&r.RunID, &r.Tenant, &r.Owner, &r.Generation, &r.CancelRequested, &signals)
			if err == nil && signals != nil {
				if err = json.Unmarshal(signals, &r.Signals); err != nil {
					err = errdefs.Internalf("pgstore: task %q: corrupt signals column: %w", r.RunID, err)
				}
			}
			return r, err
		})
		return err
	})
	if err != nil {
		return nil, s.classify(fmt.Sprintf("renew %d leases", len(ls)), err)
	}
	return out, nil
}

// renewLeasesSQL: $1 run ids, $2 owners, $3 generations, $4 the new
// expiry, $5 the TTL in µs. A lease of a run whose task is gone still renews (the run ends
// soon); its cancel request reads false, its signals none.
const renewLeasesSQL = `
WITH renewed AS (
	UPDATE leases SET expires_at = $4, ttl_us = $5
	FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(run_id, owner, generation)
	WHERE leases.run_id = u.run_id AND leases.owner = u.owner AND leases.generation = u.generation
	RETURNING leases.run_id, leases.tenant, leases.owner, leases.generation
)
SELECT r.run_id, r.tenant, r.owner, r.generation, coalesce(t.cancel_requested, false), t.signals
FROM renewed r LEFT JOIN tasks t ON t.tenant = r.tenant AND t.id = r.run_id`

// RenewLease extends l to now+ttl if it is still held as l says (owner and
// generation), expired or not; otherwise the lease was released or taken
// over, a Conflict.
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if err := checkLease(l.RunID, l.Owner, ttl); err != nil {
		return store.Lease{}, err
	}
	l.ExpiresAt = s.now().Add(ttl)
	var held bool
	err := s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, `UPDATE leases SET expires_at = $4, ttl_us = $5
			WHERE run_id = $1 AND owner = $2 AND generation = $3`, l.RunID, l.Owner, l.Generation, l.ExpiresAt, ttl.Microseconds())
		held = ct.RowsAffected() == 1
		return err
	})
	if err != nil {
		return store.Lease{}, s.classify(fmt.Sprintf("renew lease on run %q for %q", l.RunID, l.Owner), err)
	}
	if !held {
		return store.Lease{}, errdefs.Conflictf("pgstore: lease on run %q (generation %d) is no longer held by %q", l.RunID, l.Generation, l.Owner)
	}
	return l, nil
}

// ReleaseLease gives l up if it is still held as l says; releasing a lost
// lease is a no-op. The row stays, owner ”, so the next owner's generation
// is higher than every previous one.
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	err := s.retry(ctx, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, releaseLeaseSQL, l.RunID, l.Owner, l.Generation, s.now())
		return err
	})
	return s.classify(fmt.Sprintf("release lease on run %q for %q", l.RunID, l.Owner), err)
}

// releaseLeaseSQL gives a lease up if it is still held as it says.
const releaseLeaseSQL = `UPDATE leases SET owner = '', expires_at = $4
	WHERE run_id = $1 AND owner = $2 AND generation = $3`

// ExpiredLeases lists up to limit held leases that expired strictly before
// now, the earliest expiry first (a range of the partial expiry index).
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]store.Lease, error) {
	if limit < 0 {
		return nil, errdefs.Validationf("pgstore: expired leases: limit %d must not be negative", limit)
	}
	if limit == 0 {
		limit = 100
	}
	var out []store.Lease
	err := s.retry(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT run_id, tenant, owner, generation, expires_at FROM leases
			WHERE owner <> '' AND expires_at < $1 ORDER BY expires_at, run_id LIMIT $2`, now, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Lease, error) {
			var l store.Lease
			err := row.Scan(&l.RunID, &l.Tenant, &l.Owner, &l.Generation, &l.ExpiresAt)
			return l, err
		})
		return err
	})
	return out, s.classify("expired leases", err)
}

func checkLease(runID, owner string, ttl time.Duration) error {
	if runID == "" || owner == "" || ttl <= 0 {
		return errdefs.Validationf("pgstore: lease on run %q for %q (ttl %v): run id, owner and a positive ttl are required",
			runID, owner, ttl)
	}
	return nil
}
