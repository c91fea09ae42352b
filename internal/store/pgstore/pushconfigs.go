package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// PutPushConfig creates or replaces the config (TaskID, ID). The task must
// exist in the context's tenant (else NotFound): a config can never point
// at another tenant's task.
func (s *Store) PutPushConfig(ctx context.Context, c run.PushConfig) error {
	if c.TaskID == "" || c.ID == "" {
		return errdefs.Validationf("pgstore: put push config %q of task %q: task id and id are required", c.ID, c.TaskID)
	}
	if !json.Valid(c.Config) {
		return errdefs.Validationf("pgstore: put push config %q of task %q: config is not valid JSON", c.ID, c.TaskID)
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	tenant := run.TenantFrom(ctx)
	var stored bool
	err := s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, `
INSERT INTO push_configs (tenant, task_id, id, config, created_at, delivered_seq, claim_generation)
SELECT $1, $2, $3, $4, $5, $6, 1 WHERE EXISTS (SELECT 1 FROM tasks WHERE tenant = $1 AND id = $2)
ON CONFLICT (tenant, task_id, id) DO UPDATE SET config = EXCLUDED.config, created_at = EXCLUDED.created_at,
	delivered_seq = EXCLUDED.delivered_seq, done = false, parked_version = 0,
	claim_owner = '', claim_generation = push_configs.claim_generation + 1, claim_expires_at = '-infinity'`,
			tenant, c.TaskID, c.ID, []byte(c.Config), c.CreatedAt, c.Delivered)
		stored = ct.RowsAffected() == 1
		return err
	})
	if err != nil {
		return s.classify(fmt.Sprintf("put push config %q of task %q", c.ID, c.TaskID), err)
	}
	if !stored {
		return errdefs.NotFoundf("pgstore: put push config %q: task %q not found", c.ID, c.TaskID)
	}
	return nil
}

// GetPushConfig returns the config (taskID, id).
func (s *Store) GetPushConfig(ctx context.Context, taskID, id string) (run.PushConfig, error) {
	cs, err := s.pushConfigs(ctx, taskID, id)
	if err != nil {
		return run.PushConfig{}, err
	}
	if len(cs) == 0 {
		return run.PushConfig{}, errdefs.NotFoundf("pgstore: push config %q of task %q not found", id, taskID)
	}
	return cs[0], nil
}

// ListPushConfigs returns the task's configs ordered by ID.
func (s *Store) ListPushConfigs(ctx context.Context, taskID string) ([]run.PushConfig, error) {
	return s.pushConfigs(ctx, taskID, "")
}

// pushConfigs reads the configs of taskID, only id's when id is set.
func (s *Store) pushConfigs(ctx context.Context, taskID, id string) ([]run.PushConfig, error) {
	tenant := run.TenantFrom(ctx)
	var cs []run.PushConfig
	err := s.retry(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT task_id, id, config, created_at, delivered_seq, done, parked_version FROM push_configs
			WHERE tenant = $1 AND task_id = $2 AND ($3 = '' OR id = $3) ORDER BY id`, tenant, taskID, id)
		if err != nil {
			return err
		}
		cs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (run.PushConfig, error) {
			var c run.PushConfig
			var config []byte
			err := row.Scan(&c.TaskID, &c.ID, &config, &c.CreatedAt, &c.Delivered, &c.Done, &c.ParkedVersion)
			c.Config = config
			return c, err
		})
		return err
	})
	return cs, s.classify(fmt.Sprintf("read push configs of task %q", taskID), err)
}

// DeletePushConfig deletes the config (taskID, id); NotFound if absent.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, id string) error {
	tenant := run.TenantFrom(ctx)
	var deleted bool
	err := s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, `DELETE FROM push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3`, tenant, taskID, id)
		deleted = ct.RowsAffected() == 1
		return err
	})
	if err != nil {
		return s.classify(fmt.Sprintf("delete push config %q of task %q", id, taskID), err)
	}
	if !deleted {
		return errdefs.NotFoundf("pgstore: push config %q of task %q not found", id, taskID)
	}
	return nil
}
