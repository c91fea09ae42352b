package pgstore

import (
	"context"
	"fmt"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

var _ store.Pruner = (*Store)(nil)

// pruneFinishedSQL prunes one batch in one statement: it picks the oldest
// finished runs whose logs still hold events (locking their heads, skipping
// those another replica's retention holds), moves their heads'
// pruned_through to their last seq — so a later read learns what it missed
// — and deletes their event frames and checkpoints. The tasks and
// transcripts stay.
const pruneFinishedSQL = `
WITH victims AS (
	SELECT r.tenant, r.run_id, r.last_seq - r.pruned_through AS events, t.updated_at
	FROM tasks t
	JOIN runs r ON r.tenant = t.tenant AND r.run_id = t.id
	WHERE t.state IN ('completed', 'failed', 'canceled', 'rejected')
	  AND t.updated_at < $1 AND t.updated_at >= $2
	  AND r.pruned_through < r.last_seq
	ORDER BY t.updated_at
	LIMIT $3
	FOR UPDATE OF r SKIP LOCKED
), heads AS (
	UPDATE runs r SET pruned_through = r.last_seq
	FROM victims v WHERE r.tenant = v.tenant AND r.run_id = v.run_id
	RETURNING 1
), frames AS (
	DELETE FROM event_frames ef USING victims v
	WHERE ef.tenant = v.tenant AND ef.run_id = v.run_id
	RETURNING 1
), cps AS (
	DELETE FROM checkpoints c USING victims v
	WHERE c.tenant = v.tenant AND c.run_id = v.run_id
	RETURNING 1
)
SELECT (SELECT count(*) FROM heads),
       (SELECT coalesce(sum(events), 0)::bigint FROM victims),
       (SELECT count(*) FROM cps),
       (SELECT max(updated_at) FROM victims)`

// PruneFinished deletes the events and checkpoints of finished runs of
// every tenant (store.Pruner).
func (s *Store) PruneFinished(ctx context.Context, q store.PruneQuery) (store.Pruned, error) {
	if q.Limit <= 0 {
		return store.Pruned{}, errdefs.Validationf("pgstore: prune finished runs: limit %d must be positive", q.Limit)
	}
	var out store.Pruned
	err := s.retry(ctx, func(ctx context.Context) error {
		var through *time.Time
		err := s.pool.QueryRow(ctx, pruneFinishedSQL, q.Before, q.After, q.Limit).
			Scan(&out.Runs, &out.Events, &out.Checkpoints, &through)
		if through != nil {
			out.Through = through.UTC()
		}
		return err
	})
	return out, s.classify(fmt.Sprintf("prune runs finished before %s", q.Before.Format(time.RFC3339)), err)
}
