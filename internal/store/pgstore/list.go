package pgstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// ListTasks pages through the tasks matching q, newest first (created_at
// DESC, id DESC), with a keyset cursor naming the last task returned; the
// page and the total (COUNT) travel in one round trip. The WHERE clause
// holds only the filters q sets, so each shape of query gets a plan that
// uses the context index when there is a context, else the agent index
// when there is an agent (A2A ListTasks).
func (s *Store) ListTasks(ctx context.Context, q run.TaskQuery) (run.TaskPage, error) {
	tenant := run.TenantFrom(ctx)
	return s.listTasks(ctx, q, &tenant)
}

// ListTasksOfAllTenants implements store.Store: ListTasks without the
// tenant condition and without the count. Its states are written into
// the SQL (they are validated names), so that the planner can prove a
// listing of waiting tasks matches the partial index tasks_waiting
// (migration 00008) whatever plan it caches.
func (s *Store) ListTasksOfAllTenants(ctx context.Context, q run.TaskQuery) (run.TaskPage, error) {
	if q.ContextID != "" {
		return run.TaskPage{}, errdefs.Validationf("pgstore: list tasks of all tenants: a context id (%q) names one tenant's context", q.ContextID)
	}
	return s.listTasks(ctx, q, nil)
}

// listTasks lists q in tenant, or in every tenant when tenant is nil.
func (s *Store) listTasks(ctx context.Context, q run.TaskQuery, tenant *string) (run.TaskPage, error) {
	if q.Limit < 0 {
		return run.TaskPage{}, errdefs.Validationf("pgstore: list tasks: limit %d must not be negative", q.Limit)
	}
	limit := pageSize(q.Limit, 50, 100)
	var w whereClause
	if tenant != nil {
		w.add("tenant = ?", *tenant)
	}
	if q.ContextID != "" {
		w.add("context_id = ?", q.ContextID)
	}
	if q.AgentID != "" {
		w.add("agent_id = ?", q.AgentID)
	}
	if len(q.States) > 0 {
		states := make([]string, len(q.States))
		for i, st := range q.States {
			if !st.Valid() {
				return run.TaskPage{}, errdefs.Validationf("pgstore: list tasks: unknown state %q", st)
			}
			states[i] = string(st)
		}
		if tenant == nil {
			w.add("state IN ('" + strings.Join(states, "', '") + "')")
		} else {
			w.add("state = ANY(?)", states)
		}
	}
	if !q.UpdatedAfter.IsZero() {
		w.add("updated_at > ?", q.UpdatedAfter)
	}
	countSQL, countArgs := "SELECT count(*) FROM tasks WHERE "+w.String(), slices.Clone(w.args)
	if q.Cursor != "" {
		at, id, err := decodeCursor(q.Cursor)
		if err != nil {
			return run.TaskPage{}, err
		}
		w.add("(created_at, id) < (?, ?)", at, id)
	}
	pageSQL := fmt.Sprintf("SELECT %s FROM tasks WHERE %s ORDER BY created_at DESC, id DESC LIMIT %d",
		taskColumns, w.String(), limit+1)

	var page run.TaskPage
	err := s.retry(ctx, func(ctx context.Context) error {
		page = run.TaskPage{}
		b := &pgx.Batch{}
		b.Queue(pageSQL, w.args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				t, err := scanTask(rows)
				if err != nil {
					return err
				}
				page.Tasks = append(page.Tasks, t)
			}
			return rows.Err()
		})
		if tenant != nil {
			b.Queue(countSQL, countArgs...).QueryRow(func(row pgx.Row) error { return row.Scan(&page.Total) })
		}
		return s.pool.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return run.TaskPage{}, s.classify("list tasks", err)
	}
	if len(page.Tasks) > limit {
		page.Tasks = page.Tasks[:limit]
		last := page.Tasks[limit-1]
		page.NextCursor = encodeCursor(last.CreatedAt, last.ID)
	}
	return page, nil
}

// whereClause accumulates AND-ed conditions and their numbered arguments.
type whereClause struct {
	conds []string
	args  []any
}

// add appends a condition whose ? placeholders stand for args, in order.
func (w *whereClause) add(cond string, args ...any) {
	var b strings.Builder
	for _, arg := range args {
		before, after, _ := strings.Cut(cond, "?")
		w.args = append(w.args, arg)
		fmt.Fprintf(&b, "%s$%d", before, len(w.args))
		cond = after
	}
	b.WriteString(cond)
	w.conds = append(w.conds, b.String())
}

func (w *whereClause) String() string { return strings.Join(w.conds, " AND ") }

// A cursor is base64url("<created_at unix µs>:<id>"): opaque to clients,
// positional for the store.
func encodeCursor(createdAt time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(createdAt.UnixMicro(), 10) + ":" + id))
}

func decodeCursor(c string) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if us, id, ok := strings.Cut(string(raw), ":"); ok {
			if n, perr := strconv.ParseInt(us, 10, 64); perr == nil {
				return time.UnixMicro(n).UTC(), id, nil
			}
		}
	}
	return time.Time{}, "", errdefs.Validationf("pgstore: list tasks: invalid cursor %q", c)
}

// ListMessages pages through a context's transcript in position order, or
// returns its last q.Last messages.
func (s *Store) ListMessages(ctx context.Context, q run.MessageQuery) (run.MessagePage, error) {
	switch {
	case q.ContextID == "":
		return run.MessagePage{}, errdefs.Validationf("pgstore: list messages: context id is required")
	case q.After < 0 || q.Last < 0 || q.Limit < 0:
		return run.MessagePage{}, errdefs.Validationf("pgstore: list messages of context %q: after (%d), last (%d) and limit (%d) must not be negative",
			q.ContextID, q.After, q.Last, q.Limit)
	}
	sql := `SELECT position, task_id, message FROM messages
		WHERE tenant = $1 AND context_id = $2 AND position > $3 AND ($4 = '' OR task_id = $4)`
	// Last reads backwards from the end; otherwise one extra row tells
	// whether more follow.
	n := pageSize(q.Limit, 100, 1000) + 1
	if q.Last > 0 {
		sql += ` ORDER BY position DESC LIMIT $5`
		n = q.Last
	} else {
		sql += ` ORDER BY position LIMIT $5`
	}
	tenant := run.TenantFrom(ctx)
	var msgs []run.Message
	err := s.retry(ctx, func(ctx context.Context) error {
		msgs = nil
		rows, err := s.pool.Query(ctx, sql, tenant, q.ContextID, q.After, q.TaskID, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m := run.Message{ContextID: q.ContextID}
			var body []byte
			if err := rows.Scan(&m.Position, &m.TaskID, &body); err != nil {
				return err
			}
			if err := json.Unmarshal(body, &m.Message); err != nil {
				return errdefs.Internalf("pgstore: context %q: corrupt message at position %d: %w", q.ContextID, m.Position, err)
			}
			msgs = append(msgs, m)
		}
		return rows.Err()
	})
	if err != nil {
		return run.MessagePage{}, s.classify(fmt.Sprintf("list messages of context %q", q.ContextID), err)
	}
	var page run.MessagePage
	if q.Last > 0 {
		slices.Reverse(msgs)
	} else if len(msgs) == n {
		msgs = msgs[:n-1]
		page.NextAfter = msgs[len(msgs)-1].Position
	}
	page.Messages = msgs
	return page, nil
}
