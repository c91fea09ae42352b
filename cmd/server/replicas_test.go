package main

// Process-level durability tests (issue 5): real bin/server replicas on one
// PostgreSQL database, a client following a streaming echo run with
// Last-Event-ID across a killed replica, a restarted database and a drained
// replica. In every case the client must receive the run's events exactly
// once, in order, and the run must complete.

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"agentd/internal/pgtest"
)

// replicaTestTimeout bounds each test's run.
const replicaTestTimeout = 25 * time.Second

// streamRun is the run every test follows: 200 deltas over about 4 s.
const streamRun = "stream 200 every 20ms"

// killPoint is a random delta count after which to strike, at least 20.
func killPoint() int { return 20 + rand.IntN(60) }

// TestReplicaKilledRunResumesElsewhere: replica A is SIGKILLed mid-run; B
// claims the expired lease and resumes the run in attempt 2; the client
// resubscribes on B with Last-Event-ID and misses nothing.
func TestReplicaKilledRunResumesElsewhere(t *testing.T) {
	skipShort(t)
	const lease = 2 * time.Second
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": lease.String()})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := a.submit(t, c, streamRun)
	f := &follower{c: c, runID: id}
	_, killedAt := f.failOver(ctx, t, a, b, "deltas", func(ev event) bool { return ev.typ == "delta" })
	if st := b.run(t, c, id); st.Status != "completed" || st.Attempt != 2 {
		t.Errorf("run %+v, want completed in attempt 2", st)
	}
	recovery := eventTime(t, startOf(t, f.evs, 2)).Sub(killedAt)
	t.Logf("%d events; recovery (kill to run.start of attempt 2 on B): %v (lease %v)", len(f.evs), recovery, lease)
	if recovery > lease+2*time.Second {
		t.Errorf("recovery took %v, more than lease + 2s = %v", recovery, lease+2*time.Second)
	}
}

// TestReplicaDrainHandsOverAtOnce: replica A gets SIGTERM mid-run with a
// one-second drain; it ends the attempt, and hands the lease over by
// expiring it, so B resumes the run long before the 60 s lease would have
// expired.
func TestReplicaDrainHandsOverAtOnce(t *testing.T) {
	skipShort(t)
	const lease = 60 * time.Second
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": lease.String()})
	a := startReplica(t, "A", dsn, cfg, "--shutdown-timeout", "1s")
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := a.submit(t, c, streamRun)
	f := &follower{c: c, runID: id}
	strike, deltas := killPoint(), 0
	var termAt time.Time
	f.each = func(ev event) {
		if ev.typ == "delta" {
			deltas++
		}
		if deltas == strike && termAt.IsZero() {
			a.signal(syscall.SIGTERM)
			termAt = time.Now()
		}
	}
	err := f.attach(ctx, a.base)
	if termAt.IsZero() {
		t.Fatalf("the stream on A ended after %d deltas, before SIGTERM at %d: %v", deltas, strike, err)
	}
	t.Logf("SIGTERM after delta %d; A's stream closed after event %d (%s): %v", strike, f.last(), f.evs[len(f.evs)-1].typ, err)
	if err := a.waitExit(t, testTimeout); err != nil {
		t.Errorf("A exited with %v after SIGTERM, want status 0", err)
	}
	f.each = nil

	f.follow(ctx, t, b.base)
	if got := checkExactlyOnce(t, f.evs); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("run.start attempts %v, want [1 2]", got)
	}
	// A drained attempt still ends with its run.end (invariant 2).
	var ends int
	for _, ev := range f.evs {
		if ev.typ == "run.end" {
			ends++
		}
	}
	if ends != 2 {
		t.Errorf("%d run.end events, want one per attempt (2)", ends)
	}
	if st := b.run(t, c, id); st.Status != "completed" || st.Attempt != 2 {
		t.Errorf("run %+v, want completed in attempt 2", st)
	}
	handover := eventTime(t, startOf(t, f.evs, 2)).Sub(termAt)
	t.Logf("%d events; handover (SIGTERM to run.start of attempt 2 on B): %v (lease %v)", len(f.evs), handover, lease)
	if handover >= lease/2 {
		t.Errorf("handover took %v: B waited for the lease (%v) to expire", handover, lease)
	}
}

// TestReplicaSurvivesDatabaseRestart: the database is stopped (fast
// shutdown) mid-run under a replica and started again after an outage
// longer than the lease and than a store call's own retries (~140 ms), so
// only the runtime's retries can carry the run. The run must complete,
// /readyz must report the outage, and the client — reconnecting with
// Last-Event-ID whenever the server closes its stream — must receive every
// event exactly once.
func TestReplicaSurvivesDatabaseRestart(t *testing.T) {
	skipShort(t)
	for _, tc := range []struct {
		name   string
		strike int           // deltas received before the database stops
		outage time.Duration // how long it stays down
	}{
		// Up again well before the model's stream ends (about 4 s in):
		// only event writes and lease renewals meet the outage.
		{"restart mid-stream", killPoint(), time.Second},
		// Still down when the stream ends, so the loop engine's
		// checkpoint after its iteration meets the outage too.
		{"outage across the checkpoint", 20, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { testDatabaseOutage(t, tc.strike, tc.outage) })
	}
}

func testDatabaseOutage(t *testing.T, strike int, dbOutage time.Duration) {
	db := pgtest.NewCluster(t) // never pgtest's shared server: it is stopped
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "A", db.DSN(), cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := a.submit(t, c, streamRun)
	f := &follower{c: c, runID: id}
	deltas := 0
	var (
		wg         sync.WaitGroup
		restarted  = make(chan struct{})
		restartErr error
		outage     time.Duration
		notReady   int // 503 answers seen
		noAnswer   int // requests that got no answer in time
	)
	f.each = func(ev event) {
		if ev.typ == "delta" {
			deltas++
		}
		if deltas != strike {
			return
		}
		f.each = nil
		began := time.Now()
		wg.Go(func() {
			defer close(restarted)
			if restartErr = db.Stop(ctx); restartErr != nil {
				return
			}
			down := time.NewTimer(dbOutage)
			defer down.Stop()
			select {
			case <-ctx.Done():
			case <-down.C:
			}
			restartErr = db.Start(ctx)
			outage = time.Since(began)
		})
		wg.Go(func() {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for done := false; ; {
				code, _ := a.ready(500 * time.Millisecond)
				switch {
				case code == 0:
					noAnswer++
				case code == http.StatusServiceUnavailable:
					notReady++
				case code == http.StatusOK && done:
					return
				}
				select {
				case <-restarted:
					done = true
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	f.follow(ctx, t, a.base)
	wg.Wait()
	if restartErr != nil {
		t.Fatal(restartErr)
	}
	if deltas < strike {
		t.Fatalf("the run ended after %d deltas, before the outage at %d", deltas, strike)
	}
	t.Logf("database stopped after delta %d and up again %v later; %d events; /readyz during the outage: %d × 503, %d × no answer",
		strike, outage, len(f.evs), notReady, noAnswer)
	if notReady == 0 {
		t.Logf("/readyz never answered 503 during the outage (polled every 20ms)")
	}
	attempts := checkExactlyOnce(t, f.evs)
	if st := a.run(t, c, id); st.Status != "completed" {
		t.Errorf("run %+v, want completed", st)
	}
	t.Logf("attempts %v", attempts)
}
