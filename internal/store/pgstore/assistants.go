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

var _ store.Assistants = (*Store)(nil)

// assistantColumns are what scanAssistant reads, from assistants a joined
// with assistant_versions v.
const assistantColumns = `v.id, v.version, v.agent_id, v.name, v.description, v.context, v.config, v.metadata,
v.created_at, a.created_at, a.updated_at`

// versionDocs are a version's JSON documents, encoded.
type versionDocs struct{ context, config, metadata []byte }

func encodeVersion(what string, a run.Assistant) (versionDocs, error) {
	var d versionDocs
	var err error
	if d.context, err = metadataJSON(a.Context); err == nil {
		if d.config, err = metadataJSON(a.Config); err == nil {
			d.metadata, err = metadataJSON(a.Metadata)
		}
	}
	if err != nil {
		return d, errdefs.Validationf("pgstore: %s %q: %v", what, a.ID, err)
	}
	return d, nil
}

// CreateAssistant stores version 1 of a new assistant: both rows in one
// statement.
func (s *Store) CreateAssistant(ctx context.Context, a run.Assistant) (run.Assistant, error) {
	if a.ID == "" || a.AgentID == "" {
		return run.Assistant{}, errdefs.Validationf("pgstore: create assistant: id and agent id are required")
	}
	d, err := encodeVersion("create assistant", a)
	if err != nil {
		return run.Assistant{}, err
	}
	at := s.now()
	err = s.retry(ctx, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
WITH a AS (
  INSERT INTO assistants (tenant, id, agent_id, latest_version, newest_version, created_at, updated_at)
  VALUES ($1, $2, $3, 1, 1, $4, $4) RETURNING tenant, id)
INSERT INTO assistant_versions (tenant, id, version, agent_id, name, description, context, config, metadata, created_at)
SELECT tenant, id, 1, $3, $5, $6, $7, $8, $9, $4 FROM a`,
			run.TenantFrom(ctx), a.ID, a.AgentID, at, a.Name, a.Description, d.context, d.config, d.metadata)
		return err
	})
	if err = s.classify(fmt.Sprintf("create assistant %q", a.ID), err); errdefs.IsConflict(err) {
		return run.Assistant{}, errdefs.Conflictf("assistant %q already exists", a.ID)
	} else if err != nil {
		return run.Assistant{}, err
	}
	return s.GetAssistant(ctx, a.ID, 1)
}

// AddAssistantVersion stores the next version and makes it the latest, in
// one statement: two writers never get the same number.
func (s *Store) AddAssistantVersion(ctx context.Context, a run.Assistant) (run.Assistant, error) {
	d, err := encodeVersion("update assistant", a)
	if err != nil {
		return run.Assistant{}, err
	}
	var version int
	err = s.retry(ctx, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `
WITH a AS (
  UPDATE assistants SET newest_version = newest_version + 1, latest_version = newest_version + 1,
    agent_id = $3, updated_at = $4
  WHERE tenant = $1 AND id = $2 RETURNING tenant, id, newest_version),
v AS (
  INSERT INTO assistant_versions (tenant, id, version, agent_id, name, description, context, config, metadata, created_at)
  SELECT tenant, id, newest_version, $3, $5, $6, $7, $8, $9, $4 FROM a)
SELECT newest_version FROM a`,
			run.TenantFrom(ctx), a.ID, a.AgentID, s.now(), a.Name, a.Description, d.context, d.config, d.metadata).Scan(&version)
	})
	if errNoRows(err) {
		return run.Assistant{}, errdefs.NotFoundf("assistant %q not found", a.ID)
	}
	if err != nil {
		return run.Assistant{}, s.classify(fmt.Sprintf("update assistant %q", a.ID), err)
	}
	return s.GetAssistant(ctx, a.ID, version)
}

// GetAssistant returns one version, the latest for 0.
func (s *Store) GetAssistant(ctx context.Context, id string, version int) (run.Assistant, error) {
	var out run.Assistant
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = scanAssistant(s.pool.QueryRow(ctx, `
SELECT `+assistantColumns+` FROM assistants a JOIN assistant_versions v
  ON v.tenant = a.tenant AND v.id = a.id AND v.version = CASE WHEN $3 = 0 THEN a.latest_version ELSE $3 END
WHERE a.tenant = $1 AND a.id = $2`, run.TenantFrom(ctx), id, version), nil)
		return err
	})
	if errNoRows(err) {
		if version == 0 {
			return run.Assistant{}, errdefs.NotFoundf("assistant %q not found", id)
		}
		return run.Assistant{}, errdefs.NotFoundf("assistant %q has no version %d", id, version)
	}
	return out, s.classify(fmt.Sprintf("get assistant %q", id), err)
}

// ListAssistantVersions returns one page of versions, newest first.
func (s *Store) ListAssistantVersions(ctx context.Context, id string, q run.AssistantQuery) ([]run.Assistant, error) {
	meta, err := metadataJSON(q.Metadata)
	if err != nil {
		return nil, errdefs.Validationf("pgstore: list assistant versions: metadata: %v", err)
	}
	page, _, err := s.queryAssistants(ctx, `
SELECT `+assistantColumns+`, 0 FROM assistants a JOIN assistant_versions v ON v.tenant = a.tenant AND v.id = a.id
WHERE a.tenant = $1 AND a.id = $2 AND v.metadata @> $3
ORDER BY v.version DESC OFFSET $4 LIMIT $5`, run.TenantFrom(ctx), id, meta, max(q.Offset, 0), q.AssistantPageLimit())
	if err != nil || len(page) > 0 {
		return page, s.classify(fmt.Sprintf("list versions of assistant %q", id), err)
	}
	if _, err := s.GetAssistant(ctx, id, 0); err != nil {
		return nil, err
	}
	return page, nil
}

// SetLatestAssistant makes version the latest.
func (s *Store) SetLatestAssistant(ctx context.Context, id string, version int) (run.Assistant, error) {
	var set bool
	err := s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, `
UPDATE assistants SET latest_version = $3, updated_at = $4
WHERE tenant = $1 AND id = $2 AND $3 BETWEEN 1 AND newest_version`, run.TenantFrom(ctx), id, version, s.now())
		set = ct.RowsAffected() == 1
		return err
	})
	if err != nil {
		return run.Assistant{}, s.classify(fmt.Sprintf("set latest of assistant %q", id), err)
	}
	if !set {
		if _, err := s.GetAssistant(ctx, id, 0); err != nil {
			return run.Assistant{}, err
		}
		return run.Assistant{}, errdefs.NotFoundf("assistant %q has no version %d", id, version)
	}
	return s.GetAssistant(ctx, id, version)
}

// DeleteAssistant deletes the assistant; its versions go with it (ON
// DELETE CASCADE).
func (s *Store) DeleteAssistant(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "assistants", "assistant", id)
}

// SearchAssistants returns one page of latest versions, newest first.
func (s *Store) SearchAssistants(ctx context.Context, q run.AssistantQuery) ([]run.Assistant, int, error) {
	meta, err := metadataJSON(q.Metadata)
	if err != nil {
		return nil, 0, errdefs.Validationf("pgstore: search assistants: metadata: %v", err)
	}
	const where = `FROM assistants a JOIN assistant_versions v ON v.tenant = a.tenant AND v.id = a.id AND v.version = a.latest_version
WHERE a.tenant = $1 AND ($2 = '' OR v.agent_id = $2) AND ($3 = '' OR v.name = $3) AND v.metadata @> $4`
	args := []any{run.TenantFrom(ctx), q.AgentID, q.Name, meta}
	page, total, err := s.queryAssistants(ctx, `SELECT `+assistantColumns+`, count(*) OVER () `+where+`
ORDER BY a.created_at DESC, a.id DESC OFFSET $5 LIMIT $6`, append(args, max(q.Offset, 0), q.AssistantPageLimit())...)
	if err == nil && len(page) == 0 && q.Offset > 0 {
		// The window count is not there past the last page: count apart.
		err = s.retry(ctx, func(ctx context.Context) error {
			return s.pool.QueryRow(ctx, `SELECT count(*) `+where, args...).Scan(&total)
		})
	}
	return page, total, s.classify("search assistants", err)
}

// queryAssistants runs a query of assistantColumns and a count.
func (s *Store) queryAssistants(ctx context.Context, sql string, args ...any) ([]run.Assistant, int, error) {
	var (
		page  []run.Assistant
		total int
	)
	err := s.retry(ctx, func(ctx context.Context) error {
		page, total = nil, 0
		rows, err := s.pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanAssistant(rows, &total)
			if err != nil {
				return err
			}
			page = append(page, a)
		}
		return rows.Err()
	})
	return page, total, err
}

func scanAssistant(row pgx.Row, total *int) (run.Assistant, error) {
	var (
		a            run.Assistant
		ctx, cfg, md []byte
	)
	dest := []any{&a.ID, &a.Version, &a.AgentID, &a.Name, &a.Description, &ctx, &cfg, &md,
		&a.VersionCreatedAt, &a.CreatedAt, &a.UpdatedAt}
	if total != nil {
		dest = append(dest, total)
	}
	if err := row.Scan(dest...); err != nil {
		return run.Assistant{}, err
	}
	for _, doc := range []struct {
		b  []byte
		to *map[string]any
	}{{ctx, &a.Context}, {cfg, &a.Config}, {md, &a.Metadata}} {
		if err := jsonObject(doc.b, doc.to); err != nil {
			return run.Assistant{}, err
		}
	}
	a.CreatedAt, a.UpdatedAt = store.StoredTime(a.CreatedAt), store.StoredTime(a.UpdatedAt)
	a.VersionCreatedAt = store.StoredTime(a.VersionCreatedAt)
	return a, nil
}

// jsonObject decodes an object column; the empty object is nil, as the
// caller wrote it.
func jsonObject(b []byte, to *map[string]any) error {
	if err := json.Unmarshal(b, to); err != nil {
		return err
	}
	if len(*to) == 0 {
		*to = nil
	}
	return nil
}
