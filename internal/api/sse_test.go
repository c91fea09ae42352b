package api_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/api"
	"agentd/internal/runtime"
)

func TestStreamSend(t *testing.T) {
	e := newEnv(t, api.Options{})
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.srv.URL+"/v1/agents/echo/messages?stream=true",
		strings.NewReader(`{"text":"stream 20 every 5ms"}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	for h, want := range map[string]string{
		"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
	} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	evs := newSSE(res.Body).readAll(t)
	checkDense(t, evs)
	runID := evs[0].data["run_id"].(string)
	if loc := res.Header.Get("Location"); loc != "/v1/runs/"+runID {
		t.Errorf("Location %q, want /v1/runs/%s", loc, runID)
	}
	if got := strings.Fields(tokens(evs)); !slices.Equal(got, strings.Fields(wantTokens(20))) {
		t.Errorf("tokens %v", got)
	}
	if n := countType(evs, runtime.EventDelta); n != 20 {
		t.Errorf("%d delta events, want 20", n)
	}
	for _, ev := range evs {
		if ev.data["run_id"] != runID {
			t.Errorf("event %d belongs to run %v", ev.seq, ev.data["run_id"])
		}
	}
	if st := evs[len(evs)-1].data["state"]; st != "completed" {
		t.Errorf("run.end state %v", st)
	}
	// run.end is durable when it is delivered (invariant 6).
	if v := e.run(runID); v.Status != "completed" {
		t.Errorf("after run.end GET shows %s", v.Status)
	}
}

func countType(evs []sseEvent, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.typ == typ {
			n++
		}
	}
	return n
}

// readSome reads events from a fresh connection after `after`, stopping
// (and dropping the connection) after at most cut events. It reports
// whether run.end was read.
func readSome(ctx context.Context, e *env, runID string, after int64, cut int, useQuery bool) ([]sseEvent, bool, error) {
	path := "/v1/runs/" + runID + "/events"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		return nil, false, err
	}
	switch {
	case useQuery:
		req.URL.RawQuery = "after=" + strconv.FormatInt(after, 10)
	case after > 0:
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	res, err := e.c.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer res.Body.Close() // drops the connection when the stream is not over
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return nil, false, fmt.Errorf("GET %s after %d: %d %s", path, after, res.StatusCode, b)
	}
	s := newSSE(res.Body)
	var out []sseEvent
	for len(out) < cut {
		ev, err := s.next()
		if err != nil {
			return out, false, fmt.Errorf("after %d events: %w", len(out), err)
		}
		out = append(out, ev)
		if ev.typ == runtime.EventRunEnd {
			if _, err := s.next(); !errors.Is(err, io.EOF) {
				return out, true, fmt.Errorf("stream did not close after run.end: %v", err)
			}
			return out, true, nil
		}
	}
	return out, false, nil
}

// TestResumeAtRandomCuts has 10 clients read "stream 300" runs, each
// dropping its connection at random events and resuming with Last-Event-ID
// (or ?after=) until run.end: every client sees every seq once, in order
// (invariant 3), live or replayed.
func TestResumeAtRandomCuts(t *testing.T) {
	e := newEnv(t, api.Options{})
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	// One run streams as fast as it can, one is paced so that clients read
	// it live and cross the replay/live seam.
	runs := []string{
		e.send("echo", "?wait=false", text("stream 300 every 1ms")).ID,
		e.send("echo", "?wait=false", text("stream 300")).ID,
	}
	const clients = 10
	results := make([][]sseEvent, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			var all []sseEvent
			var after int64
			for conn := 0; ; conn++ {
				if conn > 1000 {
					errs[c] = errors.New("no run.end after 1000 connections")
					return
				}
				evs, end, err := readSome(ctx, e, runs[c%2], after, 1+rng.IntN(60), conn%2 == 1)
				all = append(all, evs...)
				if err != nil {
					errs[c] = err
					return
				}
				if len(evs) > 0 {
					after = evs[len(evs)-1].seq
				}
				if end {
					break
				}
			}
			results[c] = all
		}()
	}
	wg.Wait()
	for c := range clients {
		if errs[c] != nil {
			t.Fatalf("client %d: %v", c, errs[c])
		}
		checkDense(t, results[c])
		if got := strings.Fields(tokens(results[c])); !slices.Equal(got, strings.Fields(wantTokens(300))) {
			t.Errorf("client %d: %d tokens, want tok1..tok300", c, len(got))
		}
	}
}

// TestSlowClientDoesNotBlock has one client stop reading a big stream: the
// run and a fast client finish regardless (invariant 4), and the slow
// client, once it reads again, gets every event.
func TestSlowClientDoesNotBlock(t *testing.T) {
	e := newEnv(t, api.Options{}, smallSendBuffers)
	// About 600 KB of SSE: far more than the sockets between the server and
	// the slow client buffer, so the server's writes to it block.
	const n = 3000
	v := e.send("echo", "?wait=false", text("stream "+strconv.Itoa(n)+" every 0ms"))

	// The slow client: a raw connection that reads nothing until the end.
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /v1/runs/%s/events HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n", v.ID); err != nil {
		t.Fatal(err)
	}

	fast := e.openEvents(ctxT(t), "/v1/runs/"+v.ID+"/events")
	defer fast.Body.Close()
	fastEvs := newSSE(fast.Body).readAll(t)
	checkDense(t, fastEvs)
	if got := countType(fastEvs, runtime.EventDelta); got != n {
		t.Errorf("fast client: %d deltas, want %d", got, n)
	}
	e.waitStatus(v.ID, "completed")

	// Only now does the slow client read.
	_ = conn.SetReadDeadline(time.Now().Add(testTimeout))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("slow client: status %d", res.StatusCode)
	}
	slowEvs := newSSE(res.Body).readAll(t)
	checkDense(t, slowEvs)
	if len(slowEvs) != len(fastEvs) {
		t.Errorf("slow client got %d events, fast %d", len(slowEvs), len(fastEvs))
	}
	if tokens(slowEvs) != tokens(fastEvs) {
		t.Error("slow and fast clients saw different text")
	}
}

// TestHeartbeatOnSilentRun watches a run that works without events: the
// stream carries keep-alive comments, then ends when the run is canceled.
func TestHeartbeatOnSilentRun(t *testing.T) {
	e := newEnv(t, api.Options{Heartbeat: 50 * time.Millisecond})
	v := e.send("conformance", "?wait=false", text("tck-cancel"))
	e.waitStatus(v.ID, "working")
	res := e.openEvents(ctxT(t), "/v1/runs/"+v.ID+"/events")
	defer res.Body.Close()
	for h, want := range map[string]string{
		"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
	} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	br := bufio.NewReader(res.Body)
	seen := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before a keep-alive: %v", err)
		}
		if strings.TrimSpace(line) == ": keep-alive" {
			break
		}
		if strings.HasPrefix(line, "id: ") {
			seen++
		}
	}
	if seen == 0 {
		t.Error("no event before the keep-alive")
	}
	decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/cancel", nil), http.StatusAccepted)
	evs := newSSE(br).readAll(t)
	if st := evs[len(evs)-1].data["state"]; st != "canceled" {
		t.Errorf("run.end state %v, want canceled", st)
	}
}

// TestStreamClosesWhenClientLeaves drops an open stream of a silent run:
// the handler returns (the server closes without waiting) and the run goes
// on.
func TestStreamClosesWhenClientLeaves(t *testing.T) {
	e := newEnv(t, api.Options{Heartbeat: time.Hour})
	v := e.send("conformance", "?wait=false", text("tck-cancel"))
	ctx, cancel := context.WithCancel(ctxT(t))
	res := e.openEvents(ctx, "/v1/runs/"+v.ID+"/events")
	if _, err := newSSE(res.Body).next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	res.Body.Close()
	if got := e.run(v.ID).Status; got.Terminal() {
		t.Errorf("the run ended (%s) when its watcher left", got)
	}
	decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/cancel", nil), http.StatusAccepted)
	e.waitStatus(v.ID, "canceled")
}

// TestResumeAtTheEnd resumes after a finished run's last event: the stream
// is empty and closes at once.
func TestResumeAtTheEnd(t *testing.T) {
	e := newEnv(t, api.Options{Heartbeat: time.Hour})
	v := e.send("echo", "", text("hi"))
	res := e.openEvents(ctxT(t), "/v1/runs/"+v.ID+"/events")
	evs := newSSE(res.Body).readAll(t)
	res.Body.Close()
	last := strconv.FormatInt(evs[len(evs)-1].seq, 10)
	for _, h := range [][]string{{"Last-Event-ID", last}, nil} {
		path := "/v1/runs/" + v.ID + "/events"
		if h == nil {
			path += "?after=" + last
		}
		res := e.openEvents(ctxT(t), path, h...)
		ev, err := newSSE(res.Body).next()
		res.Body.Close()
		if !errors.Is(err, io.EOF) {
			t.Errorf("%s after the end: got %+v, %v; want the stream to close", path, ev, err)
		}
	}
}

// TestStreamInput answers an input-required run with ?stream=true: the
// stream is the new attempt, from its run.start to its run.end.
func TestStreamInput(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("conformance", "", text("tck-input-required"))
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.srv.URL+"/v1/runs/"+v.ID+"/input?stream=true", strings.NewReader(`{"text":"42"}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	evs := newSSE(res.Body).readAll(t)
	if evs[0].typ != runtime.EventRunStart || evs[0].data["attempt"] != float64(2) {
		t.Errorf("first event %s %v, want run.start of attempt 2", evs[0].typ, evs[0].raw)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].seq != evs[i-1].seq+1 {
			t.Fatalf("seq %d follows %d", evs[i].seq, evs[i-1].seq)
		}
	}
	if got := tokens(evs); got != "Received: 42" {
		t.Errorf("streamed text %q", got)
	}
}
