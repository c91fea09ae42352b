package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"agentd/internal/run"
	"agentd/internal/store"
)

// AddUsage adds tokens to the counter k in one upsert, so that concurrent
// charges from any replica add up. It is not retried: a retry after a lost
// answer could charge twice.
func (s *Store) AddUsage(ctx context.Context, k store.UsageKey, tokens int64) (int64, error) {
	if err := store.ValidateUsage(k, tokens); err != nil {
		return 0, err
	}
	var total int64
	err := s.pool.QueryRow(ctx, addUsageSQL, run.TenantFrom(ctx), k.AgentID, int64(k.Period.Seconds()), k.Start.UTC(), tokens).Scan(&total)
	if err != nil {
		return 0, s.classify(fmt.Sprintf("charge the usage of agent %q", k.AgentID), err)
	}
	return total, nil
}

const addUsageSQL = `
INSERT INTO agent_usage (tenant, agent_id, period_seconds, period_start, tokens)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant, agent_id, period_seconds, period_start)
DO UPDATE SET tokens = agent_usage.tokens + EXCLUDED.tokens, updated_at = now()
RETURNING tokens`

// Usage reads the counter k (0 when it was never charged).
func (s *Store) Usage(ctx context.Context, k store.UsageKey) (int64, error) {
	if err := store.ValidateUsage(k, 0); err != nil {
		return 0, err
	}
	var total int64
	err := s.retry(ctx, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, usageSQL, run.TenantFrom(ctx), k.AgentID, int64(k.Period.Seconds()), k.Start.UTC()).Scan(&total)
		if errors.Is(err, pgx.ErrNoRows) {
			total = 0
			return nil
		}
		return err
	})
	if err != nil {
		return 0, s.classify(fmt.Sprintf("read the usage of agent %q", k.AgentID), err)
	}
	return total, nil
}

const usageSQL = `
SELECT tokens FROM agent_usage
WHERE tenant = $1 AND agent_id = $2 AND period_seconds = $3 AND period_start = $4`
