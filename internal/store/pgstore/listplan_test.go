package pgstore_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"agentd/internal/pgtest"
	"agentd/internal/run"
)

// A2A ListTasks is always scoped to one agent: on a table of a few thousand
// tasks of many agents, its page query (the shape ListTasks builds for an
// agent filter, first page and continued) reads the agent index rather
// than sorting the tenant's tasks.
func TestListTasksByAgentUsesTheAgentIndex(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `
INSERT INTO tasks (tenant, id, context_id, agent_id, state, usage, attempt, cancel_requested, version, created_at, updated_at)
SELECT $1, 't-' || i, 'c-' || (i % 500), 'agent-' || (i % 40), 'completed', '{}', 1, false, 1,
	now() - i * interval '1 second', now()
FROM generate_series(1, 6000) AS i`, run.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE tasks`); err != nil {
		t.Fatal(err)
	}
	page, err := s.ListTasks(ctx, run.TaskQuery{AgentID: "agent-7", Limit: 20})
	if err != nil || len(page.Tasks) != 20 || page.Total != 150 {
		t.Fatalf("ListTasks(agent-7): %d tasks of %d, err %v; want 20 of 150", len(page.Tasks), page.Total, err)
	}
	last := page.Tasks[len(page.Tasks)-1]
	for name, q := range map[string]struct {
		sql  string
		args []any
	}{
		"first page": {`SELECT * FROM tasks WHERE tenant = $1 AND agent_id = $2 ORDER BY created_at DESC, id DESC LIMIT 21`,
			[]any{run.DefaultTenant, "agent-7"}},
		"next page": {`SELECT * FROM tasks WHERE tenant = $1 AND agent_id = $2 AND (created_at, id) < ($3, $4) ORDER BY created_at DESC, id DESC LIMIT 21`,
			[]any{run.DefaultTenant, "agent-7", last.CreatedAt, last.ID}},
	} {
		var plan strings.Builder
		rows, err := conn.Query(ctx, "EXPLAIN "+q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan.String(), "tasks_by_agent") || strings.Contains(plan.String(), "Sort") {
			t.Errorf("%s of an agent's tasks does not read tasks_by_agent in order:\n%s", name, plan.String())
		}
	}
}
