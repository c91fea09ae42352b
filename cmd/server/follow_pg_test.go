package main

// A client that follows a run's events across disconnects and replicas, as
// an SSE client does: it remembers the id of the last event it received
// whole and resubscribes with Last-Event-ID.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// follower collects one run's events.
type follower struct {
	c     *http.Client
	runID string
	evs   []event
	// each, when set, sees every event as it arrives.
	each func(event)
	// tokens is how many tokens the run streams, for tests that check.
	tokens int
}

// last is the id of the last event received (0 before any).
func (f *follower) last() int64 {
	if len(f.evs) == 0 {
		return 0
	}
	return f.evs[len(f.evs)-1].seq
}

// ended reports whether the last event received ends the run.
func (f *follower) ended() bool {
	if len(f.evs) == 0 {
		return false
	}
	ev := f.evs[len(f.evs)-1]
	state, _ := ev.data["state"].(string)
	return ev.typ == "run.end" && terminal(state)
}

func terminal(state string) bool {
	switch state {
	case "completed", "failed", "canceled", "rejected":
		return true
	}
	return false
}

// attach reads the run's events from base after the last one received,
// until the stream closes. It returns nil when the stream closed cleanly
// (after a run.end), and the error that broke it otherwise; events that
// arrived whole before the break are kept.
func (f *follower) attach(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/runs/"+f.runID+"/events", nil)
	if err != nil {
		return err
	}
	if n := f.last(); n > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(n, 10))
	}
	res, err := f.c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
		return fmt.Errorf("GET events: status %d: %s", res.StatusCode, b)
	}
	br := bufio.NewReader(res.Body)
	for {
		ev, err := readEvent(br)
		if errors.Is(err, io.EOF) {
			if len(f.evs) == 0 || f.evs[len(f.evs)-1].typ != "run.end" {
				return errors.New("stream closed cleanly but not after a run.end")
			}
			return nil
		}
		if err != nil {
			return err
		}
		f.evs = append(f.evs, ev)
		if f.each != nil {
			f.each(ev)
		}
	}
}

// follow attaches to base again and again until the run has ended,
// retrying failed attaches (the server may be restarting its database)
// until ctx ends. It logs every reconnect.
func (f *follower) follow(ctx context.Context, t *testing.T, base string) {
	t.Helper()
	retry := time.NewTicker(100 * time.Millisecond)
	defer retry.Stop()
	for !f.ended() {
		err := f.attach(ctx, base)
		if f.ended() {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("run %s did not end in time; %d events, last error %v", f.runID, len(f.evs), err)
		}
		t.Logf("stream of run %s on %s closed after event %d (%v); resubscribing with Last-Event-ID", f.runID, base, f.last(), err)
		select {
		case <-ctx.Done():
		case <-retry.C:
		}
	}
}

// checkExactlyOnce asserts that the events are the run's log with ids
// 1..N, no gap and no duplicate (readEvent has checked every data.seq
// against its id), opened by run.start and closed by a run.end that
// completes the run, and returns the attempt numbers their run.start events
// carry, in order.
func checkExactlyOnce(t *testing.T, evs []event) (attempts []int) {
	t.Helper()
	for i, ev := range evs {
		if ev.seq != int64(i+1) {
			t.Fatalf("event #%d has id %d, want %d (gap or duplicate)", i+1, ev.seq, i+1)
		}
		if ev.typ == "run.start" {
			a, _ := ev.data["attempt"].(float64)
			attempts = append(attempts, int(a))
		}
	}
	if len(evs) == 0 || evs[0].typ != "run.start" {
		t.Fatal("the log does not open with run.start")
	}
	last := evs[len(evs)-1]
	if state, _ := last.data["state"].(string); last.typ != "run.end" || state != "completed" {
		t.Fatalf("last event %s %v, want run.end completed", last.typ, last.data)
	}
	return attempts
}

// eventTime is the time the server stamped on ev.
func eventTime(t *testing.T, ev event) time.Time {
	t.Helper()
	s, _ := ev.data["time"].(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("event %d: time %q: %v", ev.seq, s, err)
	}
	return at
}

// startOf returns the run.start event of attempt n.
func startOf(t *testing.T, evs []event, n int) event {
	t.Helper()
	for _, ev := range evs {
		if a, _ := ev.data["attempt"].(float64); ev.typ == "run.start" && int(a) == n {
			return ev
		}
	}
	t.Fatalf("no run.start of attempt %d", n)
	return event{}
}

// failOver follows the run on replica a and SIGKILLs a right after the
// strike-th event that counts (killPoint), waits for a to exit, then
// follows the run to its end on replica b and checks every event came once
// and attempt 2 took over. what names the counted events in a failure.
// It returns the strike and when a was killed.
func (f *follower) failOver(ctx context.Context, t *testing.T, a, b *replica, what string, counts func(event) bool) (strike int, killedAt time.Time) {
	t.Helper()
	strike, seen := killPoint(), 0
	f.each = func(ev event) {
		if counts(ev) {
			seen++
		}
		if seen == strike && killedAt.IsZero() {
			a.signal(syscall.SIGKILL)
			killedAt = time.Now()
		}
	}
	err := f.attach(ctx, a.base)
	if killedAt.IsZero() {
		t.Fatalf("the stream on A ended after %d %s, before the kill at %d: %v", seen, what, strike, err)
	}
	t.Logf("A killed after %s %d; its stream broke after event %d: %v", what, strike, f.last(), err)
	_ = a.waitExit(t, testTimeout)
	f.each = nil
	f.follow(ctx, t, b.base)
	if got := checkExactlyOnce(t, f.evs); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("run.start attempts %v, want [1 2]", got)
	}
	return strike, killedAt
}
