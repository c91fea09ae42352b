package main

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentd/internal/a2a"
	"agentd/internal/pgtest"
)

// retentionYAML configures an echo agent and a retention that prunes a
// run's events as soon as it has finished.
const retentionYAML = `
providers:
  echo:
    type: scripted
    rules:
      - name: echo
        match: '(?s).*'
        reply: '{{.Text}}'
agents:
  - id: echo
    engine: loop
    provider: echo
retention:
  max_age: 1ms
  interval: 20ms
  batch: 10
`

// TestRetentionGap: once retention has pruned a finished run's events, a
// reader that resumes after a seq it never saw gets the gap event first —
// over REST SSE (?after= and Last-Event-ID) and over A2A (SubscribeToTask
// with the afterSeq extension) — and the run itself still reads as
// completed. On memstore and on PostgreSQL.
func TestRetentionGap(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			env := map[string]string{}
			if backend == "postgres" {
				env["DATABASE_URL"] = pgtest.DSN(t)
			}
			s := startWithEnv(t, env, "--config", writeYAML(t, retentionYAML))
			v := readJSON[runJSON](t, s.post(t, "/v1/agents/echo/messages", `{"text": "keep me briefly"}`), http.StatusOK)
			if v.Status != "completed" {
				t.Fatalf("run %+v", v)
			}
			last := waitPruned(t, s, v.ID)

			// REST: ?after= and Last-Event-ID.
			for _, h := range [][]string{nil, {"Last-Event-ID", "1"}} {
				path := "/v1/runs/" + v.ID + "/events?after=1"
				if h != nil {
					path = "/v1/runs/" + v.ID + "/events"
				}
				typ, through := firstEvent(t, s, path, h...)
				if typ != "gap" || through != last {
					t.Errorf("GET %s %v: first event %s pruned through %d, want gap pruned_through %d", path, h, typ, through, last)
				}
			}
			if got := readJSON[runJSON](t, s.get(t, "/v1/runs/"+v.ID), http.StatusOK); got.Status != "completed" {
				t.Errorf("pruned run reads as %q, want completed", got.Status)
			}

			// A2A, JSON-RPC v1.0: the gap is a status update carrying the
			// extension's gap metadata, and it ends the stream.
			body := `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"` + v.ID + `","metadata":{"afterSeq":1}}}`
			lines := a2aStream(t, s, "/agents/echo/jsonrpc", body)
			gap := false
			for _, l := range lines {
				if strings.Contains(l, a2a.MetaGap) && strings.Contains(l, `"prunedThrough":`+strconv.FormatInt(last, 10)) {
					gap = true
				}
			}
			if !gap {
				t.Errorf("A2A SubscribeToTask after seq 1: no gap update through %d in\n%s", last, strings.Join(lines, "\n"))
			}
		})
	}
}

// waitPruned waits until retention has pruned run id's events and returns
// the seq they were pruned through.
func waitPruned(t *testing.T, s *server, id string) int64 {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if typ, n := firstEvent(t, s, "/v1/runs/"+id+"/events?after=0"); typ == "gap" {
			if n == 0 {
				t.Fatalf("gap without pruned_through")
			}
			return n
		}
		time.Sleep(10 * time.Millisecond) // the next retention round
	}
	t.Fatalf("run %s was not pruned within %v", id, testTimeout)
	return 0
}

// firstEvent opens an SSE stream and returns its first event's type and,
// for a gap, the seq it was pruned through.
func firstEvent(t *testing.T, s *server, path string, header ...string) (string, int64) {
	t.Helper()
	res := s.get(t, path, header...)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	ev, err := readEvent(bufio.NewReader(res.Body))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	through, _ := ev.data["pruned_through"].(float64)
	return ev.typ, int64(through)
}

// a2aStream posts a streaming JSON-RPC request and returns the data lines
// of the stream, until it ends.
func a2aStream(t *testing.T, s *server, path, body string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var lines []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "data:") {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("POST %s: the stream did not end by itself: %v", path, err)
	}
	return lines
}
