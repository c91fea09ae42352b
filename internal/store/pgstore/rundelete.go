package pgstore

import (
	"context"
	"fmt"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

var _ store.RunDeleter = (*Store)(nil)

// deleteRunSQL deletes a finished run in one statement: it locks the task,
// deletes it when it is terminal, and with it — in data-modifying CTEs,
// which run whether read or not — its transcript messages, log head, event
// frames, checkpoints, push configs, idempotency keys and lease. It
// answers the task's state (NULL when there is none) and whether it was
// deleted.
const deleteRunSQL = `
WITH victim AS (
	SELECT tenant, id, context_id, state FROM tasks WHERE tenant = $1 AND id = $2 FOR UPDATE
), gone AS (
	DELETE FROM tasks t USING victim v
	WHERE t.tenant = v.tenant AND t.id = v.id AND v.state IN ('completed', 'failed', 'canceled', 'rejected')
	RETURNING t.id, t.context_id
), msgs AS (
	DELETE FROM messages m USING gone g WHERE m.tenant = $1 AND m.context_id = g.context_id AND m.task_id = g.id
), head AS (
	DELETE FROM runs r USING gone g WHERE r.tenant = $1 AND r.run_id = g.id
), frames AS (
	DELETE FROM event_frames ef USING gone g WHERE ef.tenant = $1 AND ef.run_id = g.id
), cps AS (
	DELETE FROM checkpoints c USING gone g WHERE c.tenant = $1 AND c.run_id = g.id
), push AS (
	DELETE FROM push_configs p USING gone g WHERE p.tenant = $1 AND p.task_id = g.id
), keys AS (
	DELETE FROM idempotency_keys k USING gone g WHERE k.tenant = $1 AND k.context_id = g.context_id AND k.task_id = g.id
), lease AS (
	DELETE FROM leases l USING gone g WHERE l.run_id = g.id AND l.tenant = $1
)
SELECT (SELECT state FROM victim), EXISTS (SELECT 1 FROM gone)`

// DeleteRun deletes a finished run and what is its (store.RunDeleter).
func (s *Store) DeleteRun(ctx context.Context, id string) error {
	var (
		state   *string
		deleted bool
	)
	err := s.retry(ctx, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, deleteRunSQL, run.TenantFrom(ctx), id).Scan(&state, &deleted)
	})
	switch {
	case err != nil:
		return s.classify(fmt.Sprintf("delete run %q", id), err)
	case state == nil:
		return errdefs.NotFoundf("run %q not found", id)
	case !deleted:
		return errdefs.Conflictf("run %q is %s: only a finished run is deleted", id, *state)
	}
	return nil
}
