package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// taskRow is a task validated and encoded for its columns.
type taskRow struct {
	run.Task
	statusMessage, taskError, artifacts, usage, metadata, signals, modelUsage []byte // json; nil is NULL
}

// newTaskRow validates t for creation (create) or update and encodes it.
// It stamps the store's clock: CreatedAt when zero on create, UpdatedAt
// always.
func newTaskRow(t run.Task, now time.Time, create bool) (*taskRow, error) {
	op := "update"
	if create {
		op = "create"
	}
	switch {
	case t.ID == "":
		return nil, errdefs.Validationf("pgstore: %s task: id is required", op)
	case create && (t.ContextID == "" || t.AgentID == ""):
		return nil, errdefs.Validationf("pgstore: create task %q: context id and agent id are required", t.ID)
	case !t.State.Valid():
		return nil, errdefs.Validationf("pgstore: %s task %q: unknown state %q", op, t.ID, t.State)
	case t.Version < 0:
		return nil, errdefs.Validationf("pgstore: %s task %q: version %d is negative", op, t.ID, t.Version)
	}
	if create && t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = now
	r := &taskRow{Task: t}
	var err error
	encode := func(v any, isNil bool) []byte {
		if err != nil || isNil {
			return nil
		}
		var b []byte
		if b, err = json.Marshal(v); err != nil {
			err = errdefs.Validationf("pgstore: %s task %q: %w", op, t.ID, err)
		}
		return b
	}
	r.statusMessage = encode(t.StatusMessage, t.StatusMessage == nil)
	r.taskError = encode(t.Error, t.Error == nil)
	r.artifacts = encode(t.Artifacts, t.Artifacts == nil)
	r.usage = encode(t.Usage, false)
	r.metadata = encode(t.Metadata, t.Metadata == nil)
	r.signals = encode(t.Signals, len(t.Signals) == 0)
	r.modelUsage = encode(t.ModelUsage, len(t.ModelUsage) == 0)
	return r, err
}

const insertTaskSQL = `
INSERT INTO tasks (tenant, id, context_id, agent_id, state, status_message, error, artifacts,
	usage, attempt, cancel_requested, metadata, signals, model_usage, version, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $15, $16, $17::bigint + 1, $13, $14)
ON CONFLICT (tenant, id) DO NOTHING`

func (r *taskRow) args(tenant string) []any {
	return []any{tenant, r.ID, r.ContextID, r.AgentID, string(r.State), r.statusMessage, r.taskError,
		r.artifacts, r.usage, r.Attempt, r.CancelRequested, r.metadata, r.CreatedAt, r.UpdatedAt, r.signals, r.modelUsage, r.Version}
}

// updateTaskSQL replaces the mutable fields; tenant, context, agent and
// creation time are the stored ones whatever the update says.
const updateTaskSQL = `
UPDATE tasks SET state = $4, status_message = $5, error = $6, artifacts = $7, usage = $8,
	attempt = $9, cancel_requested = $10, metadata = $11, updated_at = $12, signals = $13, model_usage = $14,
	version = version + 1
WHERE tenant = $1 AND id = $2 AND version = $3`

func (r *taskRow) updateArgs(tenant string) []any {
	return []any{tenant, r.ID, r.Version, string(r.State), r.statusMessage, r.taskError, r.artifacts,
		r.usage, r.Attempt, r.CancelRequested, r.metadata, r.UpdatedAt, r.signals, r.modelUsage}
}

// taskColumns are the columns scanTask reads, in order.
const taskColumns = `id, context_id, agent_id, tenant, state, status_message, error, artifacts,
	usage, attempt, cancel_requested, metadata, version, created_at, updated_at, signals, model_usage`

// scanTask decodes one row of taskColumns.
func scanTask(row pgx.Row) (run.Task, error) {
	var (
		t                                                                         run.Task
		state                                                                     string
		statusMessage, taskError, artifacts, usage, metadata, signals, modelUsage []byte
	)
	err := row.Scan(&t.ID, &t.ContextID, &t.AgentID, &t.Tenant, &state, &statusMessage, &taskError,
		&artifacts, &usage, &t.Attempt, &t.CancelRequested, &metadata, &t.Version, &t.CreatedAt, &t.UpdatedAt, &signals, &modelUsage)
	if err != nil {
		return run.Task{}, err
	}
	t.State = run.TaskState(state)
	if statusMessage != nil {
		t.StatusMessage = new(model.Message)
	}
	if taskError != nil {
		t.Error = new(run.TaskError)
	}
	for _, f := range []struct {
		b []byte
		v any
	}{{statusMessage, t.StatusMessage}, {taskError, t.Error}, {artifacts, &t.Artifacts}, {usage, &t.Usage}, {metadata, &t.Metadata}, {signals, &t.Signals}, {modelUsage, &t.ModelUsage}} {
		if f.b == nil {
			continue
		}
		if err := json.Unmarshal(f.b, f.v); err != nil {
			return run.Task{}, errdefs.Internalf("pgstore: task %q: corrupt column: %w", t.ID, err)
		}
	}
	return t, nil
}

// GetTask returns the task id of the context's tenant.
func (s *Store) GetTask(ctx context.Context, id string) (run.Task, error) {
	tenant := run.TenantFrom(ctx)
	var t run.Task
	err := s.retry(ctx, func(ctx context.Context) (err error) {
		t, err = scanTask(s.pool.QueryRow(ctx, `SELECT `+taskColumns+` FROM tasks WHERE tenant = $1 AND id = $2`, tenant, id))
		return err
	})
	if errNoRows(err) {
		return run.Task{}, errdefs.NotFoundf("pgstore: task %q not found", id)
	}
	return t, s.classify(fmt.Sprintf("get task %q", id), err)
}
