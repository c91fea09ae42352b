package pgstore_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store/pgstore"
)

// TestClaimSweepSkipsParkedConfigs: thousands of webhooks of tasks that
// wait for input cost the claim sweep nothing — its plan reads the one
// pending config through the pending index, not the sleeping ones, and
// never reads tasks — and an update of a task (here by plain SQL, as any
// writer would) wakes its config for the next sweep.
func TestClaimSweepSkipsParkedConfigs(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := t.Context()
	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const parked = 5000
	_, err = conn.Exec(ctx, `
INSERT INTO tasks (tenant, id, context_id, agent_id, state, usage, attempt, cancel_requested, version, created_at, updated_at)
SELECT $1, 't-' || i, 'c-' || i, 'a', 'input-required', '{}', 1, false, 3, now(), now() FROM generate_series(0, $2) AS i;
`, run.DefaultTenant, parked)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `
INSERT INTO push_configs (tenant, task_id, id, config, created_at, delivered_seq, parked_version, claim_expires_at)
SELECT $1, 't-' || i, 'p', '{}', now(), 6, CASE WHEN i = 0 THEN 0 ELSE 3 END,
	CASE WHEN i = 0 THEN '-infinity'::timestamptz ELSE 'infinity'::timestamptz END
FROM generate_series(0, $2) AS i`, run.DefaultTenant, parked)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE push_configs`); err != nil {
		t.Fatal(err)
	}
	plan := explainClaim(ctx, t, conn)
	removed := regexp.MustCompile(`Rows Removed by Filter: (\d+)`)
	for _, m := range removed.FindAllStringSubmatch(plan, -1) {
		if n, _ := strconv.Atoi(m[1]); n > 10 {
			t.Errorf("the claim sweep filtered %d rows out:\n%s", n, plan)
		}
	}
	if !strings.Contains(plan, "push_configs_pending") || strings.Contains(plan, "tasks") {
		t.Errorf("the claim sweep's plan does not read the pending index alone:\n%s", plan)
	}
	wantClaimed(ctx, t, s, "t-0")
	if _, err := conn.Exec(ctx, `UPDATE tasks SET state = 'working', version = version + 1 WHERE id = 't-7'`); err != nil {
		t.Fatal(err)
	}
	wantClaimed(ctx, t, s, "t-7")
}

// explainClaim is the executed plan of a claim round, rolled back.
func explainClaim(ctx context.Context, t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	now := time.Now()
	rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+pgstore.ClaimPushSQL, "r", now.Add(time.Minute), now, claimLimitForPlan)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// claimLimitForPlan is the claim batch the deliverer uses.
const claimLimitForPlan = 256

func wantClaimed(ctx context.Context, t *testing.T, s *pgstore.Store, task string) {
	t.Helper()
	cs, err := s.ClaimPushDeliveries(ctx, "r", time.Minute, claimLimitForPlan)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].TaskID != task {
		var got []string
		for _, c := range cs {
			got = append(got, c.TaskID)
		}
		t.Fatalf("claimed configs of tasks %v, want %s's alone", got, task)
	}
}
