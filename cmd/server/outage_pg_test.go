package main

// Process-level tests of the outage bound (issue 28): a database outage
// shorter than server.outage_bound restarts no run, and a replica cut off
// from the database for longer loses its runs to the others and writes
// nothing after.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/faultproxy"
	"agentd/internal/pgtest"
)

// outageTokens is how many tokens run i of these tests streams, one
// every 40 ms: from 4 s to 24 s, so that runs end before, during and
// after each fault.
func outageTokens(i int) int { return 100 + 25*i }

// TestDatabaseOutageRestartsNoRun: 3 replicas stream 21 runs while the
// database restarts (down 1 s), then stops for 10 s, and then replica A
// (which reaches it through a proxy) is cut off from it for 6 s — each
// shorter than the outage bound (30 s by default), each longer than the
// lease (2 s) but the first. Every run must finish in its first attempt
// (one run.start, one model call) and every client, following its run on
// its replica across the faults, must receive each event exactly once, in
// order. Before the bound, a replica cut off for longer than a lease lost
// every run it executed to the others, and a chaos run found two thirds of
// the running runs restarted per database outage.
func TestDatabaseOutageRestartsNoRun(t *testing.T) {
	skipShort(t)
	db := pgtest.NewCluster(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	viaA, cut := viaProxy(t, db.DSN())
	reps := []*replica{startReplica(t, "A", viaA, cfg), startReplica(t, "B", db.DSN(), cfg), startReplica(t, "C", db.DSN(), cfg)}
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	fs := followAll(ctx, c, reps, 21)
	down := func(d time.Duration) {
		if err := db.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		if err := db.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	down(time.Second)
	time.Sleep(2 * time.Second)
	down(10 * time.Second)
	time.Sleep(time.Second)
	cut.Partition(true)
	time.Sleep(6 * time.Second)
	cut.Partition(false)
	fs.wait()

	var longest time.Duration
	for i, f := range fs.fs {
		if fs.errs[i] != nil {
			t.Errorf("run %s: %v", f.runID, fs.errs[i])
			continue
		}
		checkFirstAttempt(t, f)
		took := eventTime(t, f.evs[len(f.evs)-1]).Sub(eventTime(t, f.evs[0]))
		if pace := time.Duration(f.tokens) * 40 * time.Millisecond; took-pace > longest {
			longest = took - pace
		}
	}
	t.Logf("the faults delayed a run's end by %v at most", longest)
	for _, r := range reps {
		for _, bad := range []string{"handing the run over", "run lost", "run abandoned", "resuming run"} {
			if n := strings.Count(r.logs.String(), bad); n > 0 {
				t.Errorf("replica %s logged %q %d times", r.name, bad, n)
			}
		}
	}
}

// checkFirstAttempt asserts that f received its run's log exactly once,
// in order, with one attempt and one model call.
func checkFirstAttempt(t *testing.T, f *follower) {
	t.Helper()
	attempts := checkExactlyOnce(t, f.evs)
	if !slices.Equal(attempts, []int{1}) {
		t.Errorf("run %s: attempts %v, want [1] (the outage restarted it)", f.runID, attempts)
	}
	if got, want := deltas(f.evs), toks(f.tokens); !slices.Equal(got, want) {
		t.Errorf("run %s: the deltas hold %d tokens, want tok1…tok%d once each", f.runID, len(got), f.tokens)
	}
	var steps []any
	for _, ev := range f.evs {
		if ev.typ == "step.start" {
			steps = append(steps, ev.data)
		}
	}
	if len(steps) != 1 {
		t.Errorf("run %s: steps %v, want one (the model called once for the turn)", f.runID, steps)
	}
}

// followers are n runs submitted round-robin to replicas, each followed
// by a client on its own replica until it ends.
type followers struct {
	fs   []*follower
	errs []error
	wg   sync.WaitGroup
}

func (fs *followers) wait() { fs.wg.Wait() }

// followAll submits n runs (run i streams outageTokens(i)) and follows each on the replica
// it was submitted to, reconnecting with Last-Event-ID until it ends or
// ctx does.
func followAll(ctx context.Context, c *http.Client, reps []*replica, n int) *followers {
	fs := &followers{fs: make([]*follower, n), errs: make([]error, n)}
	for i := range n {
		r := reps[i%len(reps)]
		id, err := submitOnce(ctx, c, r, fmt.Sprintf("stream %d every 40ms", outageTokens(i)))
		fs.fs[i] = &follower{c: c, runID: id, tokens: outageTokens(i)}
		if err != nil {
			fs.errs[i] = err
			continue
		}
		fs.wg.Go(func() { fs.errs[i] = fs.fs[i].followQuietly(ctx, r.base) })
	}
	return fs
}

// followQuietly is follow for goroutines other than the test's: it
// returns what stopped it instead of failing the test.
func (f *follower) followQuietly(ctx context.Context, base string) error {
	var err error
	for !f.ended() {
		if err = f.attach(ctx, base); f.ended() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("did not end in time: %d events, last error %v", len(f.evs), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// submitOnce posts text to r's echo agent without waiting for the run.
func submitOnce(ctx context.Context, c *http.Client, r *replica, text string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/v1/agents/echo/messages?wait=false",
		strings.NewReader(`{"text": "`+text+`"}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		return "", errors.New("submit: status " + res.Status)
	}
	var v struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(res.Body).Decode(&v)
	return v.ID, err
}

// viaProxy is dsn reaching its server through a fault proxy of the test's
// own, closed at cleanup.
func viaProxy(t *testing.T, dsn string) (string, *faultproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Listen(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	return u.String(), p
}

// TestPartitionBeyondTheBoundHandsRunsOver: replica A is cut off from the
// database (a real partition: its queries hang) for longer than the lease
// plus the outage bound, while it still answers the other replicas. They
// leave its runs alone while it answers and the bound has not passed, then
// take them over; A gives them up and writes nothing more: each run's
// second attempt streams its whole answer, tok1 to the last, with nothing
// of A's in between, and the runs of the other replicas keep their first
// attempt.
func TestPartitionBeyondTheBoundHandsRunsOver(t *testing.T) {
	skipShort(t)
	const lease, bound, tokens = 2 * time.Second, 4 * time.Second, 300
	db := pgtest.NewCluster(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": lease.String(), "outage_bound": bound.String()})
	viaA, cut := viaProxy(t, db.DSN())
	a := startReplica(t, "A", viaA, cfg)
	b, c := startReplica(t, "B", db.DSN(), cfg), startReplica(t, "C", db.DSN(), cfg)
	hc := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	text := fmt.Sprintf("stream %d every 40ms", tokens)
	var onA, others []*follower
	for i := range 9 {
		r := []*replica{a, b, c}[i%3]
		id, err := submitOnce(ctx, hc, r, text)
		if err != nil {
			t.Fatal(err)
		}
		f := &follower{c: hc, runID: id, tokens: tokens}
		if r == a {
			onA = append(onA, f)
		} else {
			others = append(others, f)
		}
	}
	time.Sleep(time.Second)
	cut.Partition(true)
	cutAt := time.Now()
	time.Sleep(lease + bound + 3*time.Second)
	cut.Partition(false)

	var wg sync.WaitGroup
	errs := make([]error, len(onA)+len(others))
	for i, f := range append(slices.Clone(onA), others...) {
		wg.Go(func() { errs[i] = f.followQuietly(ctx, b.base) }) // B reads every run from the store
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("follow run %d: %v", i, err)
		}
	}
	for _, f := range others {
		checkFirstAttempt(t, f)
	}
	for _, f := range onA {
		checkTakenOver(t, f, cutAt, lease, bound)
	}
	if !strings.Contains(a.logs.String(), "outage bound") {
		t.Errorf("A never said it gave its runs up for the outage bound:\n%s", a.logs)
	}
}

// checkTakenOver asserts that f's run was taken over once, after the
// outage bound but within lease + bound + 2 s of the cut at cutAt, and that
// its second attempt streamed the whole answer with nothing of the first
// attempt's replica in between.
func checkTakenOver(t *testing.T, f *follower, cutAt time.Time, lease, bound time.Duration) {
	t.Helper()
	attempts := checkExactlyOnce(t, f.evs)
	if !slices.Equal(attempts, []int{1, 2}) {
		t.Errorf("run %s: attempts %v, want [1 2] (taken over once)", f.runID, attempts)
		return
	}
	second := startOf(t, f.evs, 2)
	after := eventTime(t, second).Sub(cutAt)
	t.Logf("run %s taken over %v after the cut (lease %v, bound %v)", f.runID, after.Round(time.Millisecond), lease, bound)
	if after < bound || after > lease+bound+2*time.Second {
		t.Errorf("run %s taken over %v after the cut, want between the bound %v and lease + bound + 2s", f.runID, after, bound)
	}
	if got := deltas(f.evs[second.seq:]); !slices.Equal(got, toks(f.tokens)) {
		t.Errorf("run %s: attempt 2 streamed %d tokens (%v…), want tok1…tok%d in order: another writer's events are in it",
			f.runID, len(got), got[:min(len(got), 5)], f.tokens)
	}
}
