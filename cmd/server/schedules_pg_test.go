package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"
)

// TestScheduleFiresOncePerTickAcrossReplicas: two server processes share
// one PostgreSQL database; a schedule every second for 10 s fires each
// of its ticks exactly once across both — including across a SIGKILL of
// the replica that fired last, after which the survivor fires the rest —
// and none at or after its end date. Each tick's run is an ordinary run
// whose metadata names the schedule and the tick.
func TestScheduleFiresOncePerTickAcrossReplicas(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	replicas := []*replica{startReplica(t, "a", dsn, cfg), startReplica(t, "b", dsn, cfg)}
	c := newClient(t)

	end := time.Now().Add(10 * time.Second)
	sc := doJSON[scheduleJSON](t, c, http.MethodPost, replicas[0].base+"/v1/schedules",
		map[string]any{"agent_id": "echo", "cron": "* * * * * *", "text": "tick", "end_at": end}, http.StatusCreated)
	var want []string
	for tick := *sc.NextFireAt; tick.Before(end); tick = tick.Add(time.Second) {
		want = append(want, tick.UTC().Format(time.RFC3339Nano))
	}

	// Once three ticks have fired, kill the replica that fired the last.
	var killed *replica
	waitWithin(t, 15*time.Second, "three ticks fired", func() bool {
		last, n := lastFirer(replicas, sc.ID)
		if n >= 3 {
			killed = last
		}
		return killed != nil
	})
	killed.signal(syscall.SIGKILL)
	_ = killed.waitExit(t, testTimeout)
	survivor := replicas[0]
	if survivor == killed {
		survivor = replicas[1]
	}
	killedTicks := fired(killed, sc.ID)

	waitWithin(t, 30*time.Second, "the schedule's end", func() bool {
		got := doJSON[scheduleJSON](t, c, http.MethodGet, survivor.base+"/v1/schedules/"+sc.ID, nil, http.StatusOK)
		return got.NextFireAt == nil
	})
	ticks := scheduledTicks(t, c, survivor, sc.ID)
	if !slices.Equal(ticks, want) {
		t.Fatalf("runs for ticks\n%v\nwant each of\n%v\nonce", ticks, want)
	}
	after := fired(survivor, sc.ID)
	if len(after) == 0 || after[len(after)-1] <= killedTicks[len(killedTicks)-1] {
		t.Fatalf("the survivor fired %v, none after the killed replica's last tick %v", after, killedTicks[len(killedTicks)-1])
	}
	t.Logf("replica %s fired %d ticks before it was killed, %s fired %d", killed.name, len(killedTicks), survivor.name, len(after))
}

// scheduledTicks lists, sorted, the ticks of the runs schedule id started
// (their metadata), as r's REST API lists the newest 100 runs.
func scheduledTicks(t *testing.T, c *http.Client, r *replica, id string) []string {
	t.Helper()
	runs := doJSON[struct {
		Runs []struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"runs"`
	}](t, c, http.MethodGet, r.base+"/v1/runs?limit=100", nil, http.StatusOK)
	var ticks []string
	for _, run := range runs.Runs {
		if run.Metadata["schedule_id"] == id {
			ticks = append(ticks, run.Metadata["schedule_tick"].(string))
		}
	}
	sort.Strings(ticks)
	return ticks
}

// scheduleJSON is the part of a REST schedule these tests read.
type scheduleJSON struct {
	ID         string     `json:"id"`
	NextFireAt *time.Time `json:"next_fire_at"`
}

// firedLine is a replica's log line for a tick it fired.
var firedLine = regexp.MustCompile(`msg="schedule fired" schedule_id=(\S+) tick=(\S+) run_id=\S+ duplicate=false`)

// fired lists the ticks of schedule id r's log says it fired, in order.
func fired(r *replica, id string) []string {
	var out []string
	for _, m := range firedLine.FindAllStringSubmatch(r.logs.String(), -1) {
		if m[1] == id {
			out = append(out, m[2])
		}
	}
	sort.Strings(out)
	return out
}

// lastFirer is the replica that fired the latest tick of schedule id, and
// how many ticks were fired in all.
func lastFirer(rs []*replica, id string) (*replica, int) {
	var last *replica
	var latest string
	n := 0
	for _, r := range rs {
		ticks := fired(r, id)
		n += len(ticks)
		if len(ticks) > 0 && ticks[len(ticks)-1] > latest {
			last, latest = r, ticks[len(ticks)-1]
		}
	}
	return last, n
}

// waitWithin polls cond until it holds, failing the test after within.
func waitWithin(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond) // polling a process's log and API: no event to wait on
	}
}

// doJSON sends body (JSON, unless nil) and decodes the answer of status.
func doJSON[T any](t *testing.T, c *http.Client, method, url string, body any, status int) T {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return readJSON[T](t, res, status)
}

// TestScheduleMissedWhileAllDownFiresOnce: with its only replica killed
// for longer than the missed-tick grace (lease TTL + 5 s), a schedule
// every second fires once on recovery — its oldest missed tick — and then
// resumes at the ticks after now; the ticks between are skipped.
func TestScheduleMissedWhileAllDownFiresOnce(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "a", dsn, cfg)
	c := newClient(t)
	sc := doJSON[scheduleJSON](t, c, http.MethodPost, a.base+"/v1/schedules",
		map[string]any{"agent_id": "echo", "cron": "* * * * * *", "text": "tick"}, http.StatusCreated)
	waitWithin(t, 15*time.Second, "two ticks fired", func() bool { return len(fired(a, sc.ID)) >= 2 })
	a.signal(syscall.SIGKILL)
	_ = a.waitExit(t, testTimeout)
	before := fired(a, sc.ID)
	lastBefore, _ := time.Parse(time.RFC3339Nano, before[len(before)-1])
	time.Sleep(9 * time.Second) // every replica is down: the ticks pass unseen (grace 7 s)

	restart := time.Now()
	b := startReplica(t, "b", dsn, cfg)
	waitWithin(t, 15*time.Second, "three ticks fired after the restart", func() bool { return len(fired(b, sc.ID)) >= 3 })
	// The runs, not the log: a tick whose run the killed replica stored but
	// did not log is found by b as a duplicate.
	var between []string
	for _, tick := range scheduledTicks(t, c, b, sc.ID) {
		at, _ := time.Parse(time.RFC3339Nano, tick)
		if at.After(lastBefore) && at.Before(restart) {
			between = append(between, tick)
		}
	}
	missed := lastBefore.Add(time.Second).UTC().Format(time.RFC3339Nano)
	if !slices.Equal(between, []string{missed}) {
		t.Fatalf("ticks fired for the time every replica was down: %v, want once, the oldest missed %s", between, missed)
	}
}
