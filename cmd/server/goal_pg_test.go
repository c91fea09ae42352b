package main

// Process-level test of a goal run surviving its replica: real bin/server
// replicas on one PostgreSQL database, the one running the approved plan
// killed (SIGKILL) during its third step.

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestGoalRunSurvivesItsReplica: a goal run plans a four-step chain and
// waits for approval; approved on A, it runs until A is killed during
// step 3; B takes the run over and finishes it. The planner ran once (no
// attempt plans again), steps 1 and 2 ran once (one step start each in
// the run's log, one child run of one attempt each), step 3 resumed, and
// the result lists every step completed.
func TestGoalRunSurvivesItsReplica(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writeGoalConfig(t)
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	parked := readJSON[goalRun](t, a.postJSON(t, c, "/v1/agents/planner/messages", `{"text": "chain"}`), http.StatusOK)
	if parked.Status != "input-required" || len(parked.PendingApprovals) != 1 {
		t.Fatalf("goal: %s, pending %+v; want the plan waiting for approval", parked.Status, parked.PendingApprovals)
	}
	id := parked.ID
	res := a.postJSON(t, c, "/v1/runs/"+id+"/input?wait=false", `{"text": "approve"}`)
	_ = readJSON[goalRun](t, res, http.StatusAccepted)

	f := &follower{c: c, runID: id}
	strike := make(chan struct{})
	var once sync.Once
	f.each = func(ev event) {
		if actor, _ := ev.data["actor"].(string); ev.typ == "delta" && strings.Contains(actor, "node_s3") {
			once.Do(func() { close(strike) })
		}
	}
	streamCtx, stopStream := context.WithCancel(ctx)
	var reading sync.WaitGroup
	reading.Go(func() {
		for streamCtx.Err() == nil { // the parked attempt's stream ends at its run.end
			_ = f.attach(streamCtx, a.base)
			select {
			case <-streamCtx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	select {
	case <-strike:
	case <-ctx.Done():
		t.Fatalf("step 3 never streamed on A")
	}
	a.signal(syscall.SIGKILL)
	_ = a.waitExit(t, testTimeout)
	stopStream()
	reading.Wait()
	f.each = nil

	f.follow(ctx, t, b.base)
	attempts := checkExactlyOnce(t, f.evs)
	if len(attempts) != 3 || attempts[2] != 3 {
		t.Fatalf("attempts %v, want planned (1), approved (2), taken over (3)", attempts)
	}
	if st := waitRun(t, c, b, id, 5*time.Second); st.Status != "completed" {
		t.Fatalf("run %s: %+v", id, st)
	}
	if n := stepStarts(f.evs, "planner"); n != 1 {
		t.Errorf("the planner ran %d times, want once", n)
	}
	for step, want := range map[string]int{"s1": 1, "s2": 1, "s3": 2, "s4": 1} {
		if got := stepStarts(f.evs, step); got != want {
			t.Errorf("step %s started %d times in the run's log, want %d", step, got, want)
		}
	}
	checkChildAttempts(ctx, t, dsn, id, map[string]int{"s1": 1, "s2": 1, "s3": 2, "s4": 1})
	final := readJSON[goalRun](t, b.get(t, "/v1/runs/"+id), http.StatusOK)
	checkGoalResult(t, final, []string{"s1", "s2", "s3", "s4"})
}

// checkChildAttempts: each step of run id ran as one child run, completed,
// in the given number of attempts.
func checkChildAttempts(ctx context.Context, t *testing.T, dsn, id string, want map[string]int) {
	t.Helper()
	db := dbConn(t, dsn)
	rows, err := db.Query(ctx, `SELECT metadata->>'parent_step', attempt, state FROM tasks WHERE metadata->>'parent_run_id' = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type child struct {
		attempt int
		state   string
	}
	children := map[string][]child{}
	for rows.Next() {
		var step string
		var ch child
		if err := rows.Scan(&step, &ch.attempt, &ch.state); err != nil {
			t.Fatal(err)
		}
		children[step] = append(children[step], ch)
	}
	for step, attempts := range want {
		cs := children[step]
		if len(cs) != 1 || cs[0].state != "completed" || cs[0].attempt != attempts {
			t.Errorf("step %s: child runs %+v, want one, completed, in %d attempt(s)", step, cs, attempts)
		}
	}
}
