package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/pgtest"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// Applies that arrive while the store's transactions are in flight are
// written together in the next one; a change of the group whose guard
// fails gets its own answer (here a Conflict) and does not take the
// others down.
func TestApplyGroupsWhatArrivesMeanwhile(t *testing.T) {
	dsn := pgtest.DSN(t)
	var counter statementCounter
	s := openDSN(t, dsn, pgstore.WithTracer(&counter))
	ctx := t.Context()
	for _, run := range []string{"held-a", "held-b"} {
		if err := s.Apply(ctx, store.Change{Events: events(run, 1, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	// Hold the heads of two runs, so that the two transactions that may be
	// in flight at once wait on them.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE run_id IN ('held-a', 'held-b') FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	// The waits are watched from a connection of their own: inside the
	// holding transaction pg_stat_activity is a snapshot taken at its first
	// read, and would never show the second transaction arrive.
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(context.Background())
	holder := conn.PgConn().PID()
	counter.batches.Store(0)
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	apply := func(name string, c store.Change) {
		wg.Go(func() {
			err := s.Apply(ctx, c)
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	// One after the other: together they would share one transaction.
	apply("held-a", store.Change{Events: events("held-a", 2, 2)})
	waitFor(t, func() bool { return lockWaiters(t, watch, holder) == 1 }, "a transaction to wait on held-a's row")
	apply("held-b", store.Change{Events: events("held-b", 2, 2)})
	waitForOr(t, func() bool { return lockWaiters(t, watch, holder) == 2 }, "both transactions to wait on the held rows", func() {
		t.Logf("%d changes queued", pgstore.QueuedApplies(s))
		dumpActivity(t, watch)
	})
	late := []string{"late-1", "late-2", "late-3", "late-4", "late-5"}
	for _, run := range late {
		apply(run, store.Change{Events: events(run, 1, 3)})
	}
	apply("gap", store.Change{Events: events("late-gap", 2, 2)}) // does not continue an empty log
	waitFor(t, func() bool { return pgstore.QueuedApplies(s) == len(late)+1 }, "the late changes to queue")
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for name, err := range errs {
		if name == "gap" {
			if !errdefs.IsConflict(err) {
				t.Errorf("the change with a gap: %v, want Conflict", err)
			}
		} else if err != nil {
			t.Errorf("Apply %s: %v", name, err)
		}
	}
	// The two held, the late group failing on the gap, the late group
	// without it, the gap alone.
	if n := counter.batches.Load(); n != 5 {
		t.Errorf("%d transactions, want 5 (the late changes grouped)", n)
	}
	for _, run := range late {
		if page, err := s.ReadEvents(ctx, run, 0, 0); err != nil || page.LastSeq != 3 {
			t.Errorf("run %s: last seq %d, %v; want 3", run, page.LastSeq, err)
		}
	}
}

// lockWaiters counts the sessions that wait on a lock holder holds. Only
// those count: another session of the server waiting on some other lock
// (the suite shares the server with other packages' tests) is not one of
// the store's transactions.
func lockWaiters(t *testing.T, watch *pgx.Conn, holder uint32) int {
	var n int
	err := watch.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'
		AND pg_blocking_pids(pid) @> ARRAY[$1::int]`, holder).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	waitForOr(t, cond, what, func() {})
}

// waitForOr is waitFor, calling dump before it fails (what the server was
// doing, for a failure seen only under load).
func waitForOr(t *testing.T, cond func() bool, what string, dump func()) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			dump()
			t.Fatalf("waited %v for %s", waitLimit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dumpActivity logs the sessions of the test's database.
func dumpActivity(t *testing.T, conn *pgx.Conn) {
	rows, err := conn.Query(t.Context(), `SELECT pid, coalesce(state,''), coalesce(wait_event_type,''), coalesce(wait_event,''), left(query, 120), pg_blocking_pids(pid)::text FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		t.Log(err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		var st, wt, we, q, bl string
		_ = rows.Scan(&pid, &st, &wt, &we, &q, &bl)
		t.Logf("pid %d state %q wait %s/%s blocked by %s: %s", pid, st, wt, we, bl, q)
	}
}
