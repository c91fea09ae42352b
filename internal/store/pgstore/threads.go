package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

var _ store.Threads = (*Store)(nil)

// CreateThread stores a new thread; an existing id is a Conflict.
func (s *Store) CreateThread(ctx context.Context, t run.Thread) (run.Thread, error) {
	if t.ID == "" {
		return run.Thread{}, errdefs.Validationf("pgstore: create thread: id is required")
	}
	meta, err := metadataJSON(t.Metadata)
	if err != nil {
		return run.Thread{}, errdefs.Validationf("pgstore: create thread %q: metadata: %v", t.ID, err)
	}
	at := s.now()
	var out run.Thread
	err = s.retry(ctx, func(ctx context.Context) error {
		row := s.pool.QueryRow(ctx, `
INSERT INTO threads (tenant, id, metadata, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
RETURNING id, metadata, created_at, updated_at`, run.TenantFrom(ctx), t.ID, meta, at)
		out, err = scanThread(row)
		return err
	})
	if err = s.classify(fmt.Sprintf("create thread %q", t.ID), err); errdefs.IsConflict(err) {
		return run.Thread{}, errdefs.Conflictf("thread %q already exists", t.ID)
	}
	return out, err
}

// GetThread returns the thread of the context's tenant.
func (s *Store) GetThread(ctx context.Context, id string) (run.Thread, error) {
	var out run.Thread
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = scanThread(s.pool.QueryRow(ctx, `
SELECT id, metadata, created_at, updated_at FROM threads WHERE tenant = $1 AND id = $2`, run.TenantFrom(ctx), id))
		return err
	})
	if errNoRows(err) {
		return run.Thread{}, errdefs.NotFoundf("thread %q not found", id)
	}
	return out, s.classify(fmt.Sprintf("get thread %q", id), err)
}

// UpdateThreadMetadata merges metadata into the thread's; a key set to
// null is removed.
func (s *Store) UpdateThreadMetadata(ctx context.Context, id string, metadata map[string]any) (run.Thread, error) {
	set, drop := map[string]any{}, []string{}
	for k, v := range metadata {
		if v == nil {
			drop = append(drop, k)
			continue
		}
		set[k] = v
	}
	meta, err := metadataJSON(set)
	if err != nil {
		return run.Thread{}, errdefs.Validationf("pgstore: update thread %q: metadata: %v", id, err)
	}
	var out run.Thread
	err = s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = scanThread(s.pool.QueryRow(ctx, `
UPDATE threads SET metadata = (metadata - $3::text[]) || $4, updated_at = $5 WHERE tenant = $1 AND id = $2
RETURNING id, metadata, created_at, updated_at`, run.TenantFrom(ctx), id, drop, meta, s.now()))
		return err
	})
	if errNoRows(err) {
		return run.Thread{}, errdefs.NotFoundf("thread %q not found", id)
	}
	return out, s.classify(fmt.Sprintf("update thread %q", id), err)
}

// DeleteThread deletes the thread record.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "threads", "thread", id)
}

// SearchThreads returns one page of the matching threads, newest first.
func (s *Store) SearchThreads(ctx context.Context, q run.ThreadQuery) ([]run.Thread, int, error) {
	meta, err := metadataJSON(q.Metadata)
	if err != nil {
		return nil, 0, errdefs.Validationf("pgstore: search threads: metadata: %v", err)
	}
	var ids []string
	if len(q.IDs) > 0 {
		ids = q.IDs
	}
	var (
		page  []run.Thread
		total int
	)
	err = s.retry(ctx, func(ctx context.Context) error {
		page, total = nil, 0
		rows, err := s.pool.Query(ctx, `
SELECT id, metadata, created_at, updated_at, count(*) OVER () FROM threads
WHERE tenant = $1 AND metadata @> $2 AND ($3::text[] IS NULL OR id = ANY($3))
ORDER BY created_at DESC, id DESC OFFSET $4 LIMIT $5`,
			run.TenantFrom(ctx), meta, ids, max(q.Offset, 0), q.ThreadPageLimit())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanThreadCounted(rows, &total)
			if err != nil {
				return err
			}
			page = append(page, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, s.classify("search threads", err)
	}
	if len(page) == 0 && q.Offset > 0 {
		// The window count is not there past the last page: count apart.
		err = s.retry(ctx, func(ctx context.Context) error {
			return s.pool.QueryRow(ctx, `
SELECT count(*) FROM threads WHERE tenant = $1 AND metadata @> $2 AND ($3::text[] IS NULL OR id = ANY($3))`,
				run.TenantFrom(ctx), meta, ids).Scan(&total)
		})
	}
	return page, total, s.classify("count threads", err)
}

func metadataJSON(m map[string]any) ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(m)
}

func scanThread(row pgx.Row) (run.Thread, error) {
	return scanThreadCounted(row, nil)
}

func scanThreadCounted(row pgx.Row, total *int) (run.Thread, error) {
	var (
		t    run.Thread
		meta []byte
	)
	dest := []any{&t.ID, &meta, &t.CreatedAt, &t.UpdatedAt}
	if total != nil {
		dest = append(dest, total)
	}
	if err := row.Scan(dest...); err != nil {
		return run.Thread{}, err
	}
	if err := json.Unmarshal(meta, &t.Metadata); err != nil {
		return run.Thread{}, err
	}
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	}
	t.CreatedAt, t.UpdatedAt = store.StoredTime(t.CreatedAt), store.StoredTime(t.UpdatedAt)
	return t, nil
}

// deleteByID deletes the row id of the caller's tenant from table (a
// constant: threads, assistants, schedules; their rows' dependents go
// by ON DELETE CASCADE); what names the record in errors.
func (s *Store) deleteByID(ctx context.Context, table, what, id string) error {
	var deleted bool
	err := s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, `DELETE FROM `+table+` WHERE tenant = $1 AND id = $2`, run.TenantFrom(ctx), id)
		deleted = ct.RowsAffected() == 1
		return err
	})
	if err != nil {
		return s.classify(fmt.Sprintf("delete %s %q", what, id), err)
	}
	if !deleted {
		return errdefs.NotFoundf("%s %q not found", what, id)
	}
	return nil
}
