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

var _ store.Schedules = (*Store)(nil)

// scheduleColumns are the columns scanSchedule reads, in its order.
const scheduleColumns = `tenant, id, agent_id, assistant_id, context_id, cron, timezone, input, metadata, end_at, next_fire_at, claimed_by, created_at, updated_at`

// CreateSchedule stores s in the context's tenant; an existing id is a
// Conflict.
func (s *Store) CreateSchedule(ctx context.Context, sc run.Schedule) (run.Schedule, error) {
	if err := store.ValidateSchedule(sc); err != nil {
		return run.Schedule{}, err
	}
	meta, err := metadataJSON(sc.Metadata)
	if err != nil {
		return run.Schedule{}, errdefs.Validationf("pgstore: create schedule %q: metadata: %v", sc.ID, err)
	}
	input, err := json.Marshal(sc.Input)
	if err != nil {
		return run.Schedule{}, errdefs.Validationf("pgstore: create schedule %q: input: %v", sc.ID, err)
	}
	at := s.now()
	var out run.Schedule
	err = s.retry(ctx, func(ctx context.Context) error {
		out, err = scanSchedule(s.pool.QueryRow(ctx, `
INSERT INTO schedules (tenant, id, agent_id, assistant_id, context_id, cron, timezone, input, metadata, end_at, next_fire_at, created_at, updated_at)
VALUES ($1, $2, $3, $12, $4, $5, $6, $7, $8, $9, $10, $11, $11)
RETURNING `+scheduleColumns, run.TenantFrom(ctx), sc.ID, sc.AgentID, sc.ContextID, sc.Cron, sc.TimeZone, input, meta,
			storedPtr(sc.EndAt), storedPtr(sc.NextFireAt), at, sc.AssistantID))
		return err
	})
	if err = s.classify(fmt.Sprintf("create schedule %q", sc.ID), err); errdefs.IsConflict(err) {
		return run.Schedule{}, errdefs.Conflictf("schedule %q already exists", sc.ID)
	}
	return out, err
}

// GetSchedule returns the schedule of the context's tenant.
func (s *Store) GetSchedule(ctx context.Context, id string) (run.Schedule, error) {
	var out run.Schedule
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = scanSchedule(s.pool.QueryRow(ctx, `
SELECT `+scheduleColumns+` FROM schedules WHERE tenant = $1 AND id = $2`, run.TenantFrom(ctx), id))
		return err
	})
	if errNoRows(err) {
		return run.Schedule{}, errdefs.NotFoundf("schedule %q not found", id)
	}
	return out, s.classify(fmt.Sprintf("get schedule %q", id), err)
}

// DeleteSchedule deletes the schedule.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "schedules", "schedule", id)
}

// SearchSchedules returns one page of the matching schedules, oldest
// first, and how many match.
func (s *Store) SearchSchedules(ctx context.Context, q run.ScheduleQuery) ([]run.Schedule, int, error) {
	meta, err := metadataJSON(q.Metadata)
	if err != nil {
		return nil, 0, errdefs.Validationf("pgstore: search schedules: metadata: %v", err)
	}
	var (
		page  []run.Schedule
		total int
	)
	const where = `WHERE tenant = $1 AND metadata @> $2 AND ($3 = '' OR agent_id = $3) AND ($4 = '' OR context_id = $4) AND ($5 = '' OR assistant_id = $5)`
	err = s.retry(ctx, func(ctx context.Context) error {
		page = nil
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM schedules `+where,
			run.TenantFrom(ctx), meta, q.AgentID, q.ContextID, q.AssistantID).Scan(&total); err != nil {
			return err
		}
		rows, err := s.pool.Query(ctx, `SELECT `+scheduleColumns+` FROM schedules `+where+`
ORDER BY created_at, id OFFSET $6 LIMIT $7`, run.TenantFrom(ctx), meta, q.AgentID, q.ContextID, q.AssistantID, max(q.Offset, 0), q.SchedulePageLimit())
		if err != nil {
			return err
		}
		page, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (run.Schedule, error) { return scanSchedule(row) })
		return err
	})
	return page, total, s.classify("search schedules", err)
}

// ClaimDueSchedules claims the due schedules of every tenant for owner:
// the rows another claimant has locked are skipped, and one whose claim
// was taken meanwhile no longer matches, so each tick has one winner.
func (s *Store) ClaimDueSchedules(ctx context.Context, owner string, now time.Time, ttl time.Duration, limit int) ([]run.Schedule, error) {
	now = store.StoredTime(now)
	var out []run.Schedule
	err := s.retry(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `
UPDATE schedules s SET claimed_by = $1, claim_until = $3
FROM (SELECT tenant, id FROM schedules
      WHERE next_fire_at <= $2 AND (claimed_by = '' OR claim_until <= $2)
      ORDER BY next_fire_at LIMIT $4 FOR UPDATE SKIP LOCKED) due
WHERE s.tenant = due.tenant AND s.id = due.id
RETURNING s.tenant, s.id, s.agent_id, s.assistant_id, s.context_id, s.cron, s.timezone, s.input, s.metadata, s.end_at, s.next_fire_at, s.claimed_by, s.created_at, s.updated_at`,
			owner, now, now.Add(ttl), limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (run.Schedule, error) { return scanSchedule(row) })
		return err
	})
	return out, s.classify("claim due schedules", err)
}

// AdvanceSchedule moves a claimed schedule to next and frees its claim,
// if it still stands at the tick its claimant fired.
func (s *Store) AdvanceSchedule(ctx context.Context, sc run.Schedule, next *time.Time) error {
	if sc.NextFireAt == nil {
		return errdefs.Conflictf("schedule %q: no tick was claimed", sc.ID)
	}
	var moved bool
	err := s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, `
UPDATE schedules SET next_fire_at = $5, claimed_by = '', claim_until = NULL, updated_at = $6
WHERE tenant = $1 AND id = $2 AND next_fire_at = $3 AND claimed_by = $4`,
			sc.Tenant, sc.ID, store.StoredTime(*sc.NextFireAt), sc.ClaimedBy, storedPtr(next), s.now())
		moved = ct.RowsAffected() == 1
		return err
	})
	if err != nil || moved {
		return s.classify(fmt.Sprintf("advance schedule %q", sc.ID), err)
	}
	if _, err := s.GetSchedule(run.WithTenant(ctx, sc.Tenant), sc.ID); err != nil {
		return err
	}
	return errdefs.Conflictf("schedule %q: the tick was claimed by another replica", sc.ID)
}

// NextScheduleDue is when a schedule can next be claimed.
func (s *Store) NextScheduleDue(ctx context.Context) (time.Time, error) {
	var at *time.Time
	err := s.retry(ctx, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `
SELECT min(CASE WHEN claimed_by <> '' AND claim_until > next_fire_at THEN claim_until ELSE next_fire_at END)
FROM schedules WHERE next_fire_at IS NOT NULL`).Scan(&at)
	})
	if err != nil || at == nil {
		return time.Time{}, s.classify("next schedule due", err)
	}
	return store.StoredTime(*at), nil
}

func scanSchedule(row pgx.Row) (run.Schedule, error) {
	var (
		sc          run.Schedule
		input, meta []byte
	)
	if err := row.Scan(&sc.Tenant, &sc.ID, &sc.AgentID, &sc.AssistantID, &sc.ContextID, &sc.Cron, &sc.TimeZone, &input, &meta,
		&sc.EndAt, &sc.NextFireAt, &sc.ClaimedBy, &sc.CreatedAt, &sc.UpdatedAt); err != nil {
		return run.Schedule{}, err
	}
	if err := json.Unmarshal(input, &sc.Input); err != nil {
		return run.Schedule{}, err
	}
	if err := json.Unmarshal(meta, &sc.Metadata); err != nil {
		return run.Schedule{}, err
	}
	if len(sc.Metadata) == 0 {
		sc.Metadata = nil
	}
	sc.EndAt, sc.NextFireAt = storedPtr(sc.EndAt), storedPtr(sc.NextFireAt)
	sc.CreatedAt, sc.UpdatedAt = store.StoredTime(sc.CreatedAt), store.StoredTime(sc.UpdatedAt)
	return sc, nil
}

// storedPtr is a copy of *t as stores keep times, nil for nil.
func storedPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := store.StoredTime(*t)
	return &v
}
