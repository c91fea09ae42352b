package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// Push delivery claims are global, like leases: a replica claims pending
// configs of every tenant. Expiries are stamped by the store's clock.

// claimPushSQL claims up to $4 pending configs whose claim expired before
// $3 for owner $1 until $2. A parked config sleeps at 'infinity' until an
// update of its task wakes it (migration 00006), so the sweep never reads
// tasks and never scans a waiting task's config. SKIP LOCKED lets concurrent claimants take different configs
// instead of queueing on the same rows; the row lock makes each config's
// claim one winner's.
const claimPushSQL = `
UPDATE push_configs p SET claim_owner = $1, claim_generation = p.claim_generation + 1, claim_expires_at = $2
FROM (SELECT c.tenant, c.task_id, c.id FROM push_configs c
	WHERE NOT c.done AND c.claim_expires_at <= $3
	ORDER BY c.claim_expires_at LIMIT $4 FOR UPDATE OF c SKIP LOCKED) c
WHERE p.tenant = c.tenant AND p.task_id = c.task_id AND p.id = c.id
RETURNING p.tenant, p.task_id, p.id, p.config, p.created_at, p.delivered_seq, p.claim_generation, p.parked_version`

// ClaimPushDeliveries claims pending configs whose claim is free or expired.
func (s *Store) ClaimPushDeliveries(ctx context.Context, owner string, ttl time.Duration, limit int) ([]run.PushConfig, error) {
	if owner == "" || ttl <= 0 || limit <= 0 {
		return nil, errdefs.Validationf("pgstore: claim push deliveries: owner %q, ttl %v and limit %d must be set and positive", owner, ttl, limit)
	}
	now := s.now()
	until := now.Add(ttl)
	var cs []run.PushConfig
	err := s.retry(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, claimPushSQL, owner, until, now, limit)
		if err != nil {
			return err
		}
		cs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (run.PushConfig, error) {
			c := run.PushConfig{Claim: run.PushClaim{Owner: owner, ExpiresAt: until}}
			var config []byte
			err := row.Scan(&c.Tenant, &c.TaskID, &c.ID, &config, &c.CreatedAt, &c.Delivered, &c.Claim.Generation, &c.ParkedVersion)
			c.Config = config
			return c, err
		})
		return err
	})
	return cs, s.classify(fmt.Sprintf("claim push deliveries for %q", owner), err)
}

// savePushSQL records the cursor of $1/$2/$3 if $4 still holds the claim
// of generation $5: $6 delivered seq, $7 done, $8 the claim's new expiry,
// $9 the task version it parks at (0: not parked). A done or parked
// config's claim is released.
//
// A parked config sleeps ('infinity', until its task's next update wakes
// it — migration 00006) if its task is still at the version it parks at,
// else it is claimable at once. The version is read under a share lock on
// the task's row, so a concurrent task update either committed before
// (and is seen here) or waits for this write and then wakes the config.
// savePushesSQL does the same.
const savePushSQL = `
UPDATE push_configs SET delivered_seq = $6, done = $7, parked_version = $9::bigint,
	claim_owner = CASE WHEN $7 OR $9::bigint <> 0 THEN '' ELSE claim_owner END,
	claim_expires_at = CASE WHEN $7 THEN '-infinity'::timestamptz
		WHEN $9::bigint <> 0 THEN CASE WHEN (SELECT t.version FROM tasks t WHERE t.tenant = $1 AND t.id = $2 FOR SHARE) = $9::bigint
			THEN 'infinity'::timestamptz ELSE '-infinity'::timestamptz END
		ELSE $8 END
WHERE tenant = $1 AND task_id = $2 AND id = $3 AND claim_owner = $4 AND claim_generation = $5`

// SavePushDelivery records c's cursor if its claim is still held.
func (s *Store) SavePushDelivery(ctx context.Context, c run.PushConfig, ttl time.Duration) (run.PushConfig, error) {
	what := fmt.Sprintf("save push delivery of config %q of task %q", c.ID, c.TaskID)
	if ttl <= 0 || c.Claim.Owner == "" {
		return run.PushConfig{}, errdefs.Validationf("pgstore: %s: ttl %v must be positive and the claim's owner set", what, ttl)
	}
	tenant := run.TenantFrom(ctx)
	until := s.now().Add(ttl)
	var saved bool
	err := s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, savePushSQL, tenant, c.TaskID, c.ID, c.Claim.Owner, c.Claim.Generation, c.Delivered, c.Done, until, c.ParkedVersion)
		saved = ct.RowsAffected() == 1
		return err
	})
	if err != nil {
		return run.PushConfig{}, s.classify(what, err)
	}
	if !saved {
		if _, err := s.GetPushConfig(ctx, c.TaskID, c.ID); err != nil {
			return run.PushConfig{}, err
		}
		return run.PushConfig{}, errdefs.Conflictf("pgstore: the delivery claim on push config %q of task %q is held by another owner than %q", c.ID, c.TaskID, c.Claim.Owner)
	}
	c.Tenant = tenant
	c.Claim.ExpiresAt = until
	if c.Done || c.ParkedVersion != 0 {
		c.Claim.Owner = ""
	}
	return c, nil
}

// savePushesSQL is savePushSQL for many configs at once: $1 the claims'
// new expiry, then one array per column.
//
// Its commit does not wait for the WAL flush (synchronous_commit off for
// this transaction alone): a cursor lost with a database crash only moves
// delivery back — updates are repeated, never lost —, and a replica's
// kill loses nothing, since the write is committed and visible before the
// next update goes out. Waiting for the flush would bound every webhook
// to one update per WAL flush.
const savePushesSQL = `
UPDATE push_configs p SET delivered_seq = v.seq, done = v.done, parked_version = v.parked,
	claim_owner = CASE WHEN v.done OR v.parked <> 0 THEN '' ELSE p.claim_owner END,
	claim_expires_at = CASE WHEN v.done THEN '-infinity'::timestamptz
		WHEN v.parked <> 0 THEN CASE WHEN (SELECT t.version FROM tasks t WHERE t.tenant = v.tenant AND t.id = v.task_id FOR SHARE) = v.parked
			THEN 'infinity'::timestamptz ELSE '-infinity'::timestamptz END
		ELSE $1 END
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::boolean[], $9::bigint[])
	AS v(tenant, task_id, id, owner, generation, seq, done, parked),
	(SELECT set_config('synchronous_commit', 'off', true)) AS async
WHERE p.tenant = v.tenant AND p.task_id = v.task_id AND p.id = v.id
	AND p.claim_owner = v.owner AND p.claim_generation = v.generation
RETURNING p.tenant, p.task_id, p.id`

// SavePushDeliveries saves many configs' cursors in one statement.
func (s *Store) SavePushDeliveries(ctx context.Context, cs []run.PushConfig, ttl time.Duration) ([]bool, error) {
	if ttl <= 0 {
		return nil, errdefs.Validationf("pgstore: save push deliveries: ttl %v is not positive", ttl)
	}
	if len(cs) == 0 {
		return nil, nil
	}
	n := len(cs)
	tenants, tasks, ids, owners := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	gens, seqs, done, parked := make([]int64, n), make([]int64, n), make([]bool, n), make([]int64, n)
	at := map[[3]string]int{}
	for i, c := range cs {
		tenants[i], tasks[i], ids[i], owners[i] = c.Tenant, c.TaskID, c.ID, c.Claim.Owner
		gens[i], seqs[i], done[i], parked[i] = c.Claim.Generation, c.Delivered, c.Done, c.ParkedVersion
		at[[3]string{c.Tenant, c.TaskID, c.ID}] = i
	}
	saved := make([]bool, n)
	err := s.retry(ctx, func(ctx context.Context) error {
		clear(saved)
		rows, err := s.pool.Query(ctx, savePushesSQL, s.now().Add(ttl), tenants, tasks, ids, owners, gens, seqs, done, parked)
		if err != nil {
			return err
		}
		var k [3]string
		_, err = pgx.ForEachRow(rows, []any{&k[0], &k[1], &k[2]}, func() error {
			saved[at[k]] = true
			return nil
		})
		return err
	})
	if err != nil {
		return nil, s.classify(fmt.Sprintf("save %d push deliveries", n), err)
	}
	return saved, nil
}
