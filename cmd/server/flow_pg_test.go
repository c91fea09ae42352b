package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"agentd/internal/config"
)

// TestFlowRefundKilledAfterToolCall: the refund flow runs on replica A up
// to its issue_refund action; the demo tool records the refund in the
// shared ledger and then pauses (AGENTD_DEMO_PAUSE_AFTER), so A is killed
// after the tool's effect and before the flow's next checkpoint. Replica B
// takes the run over, replays the action with the same idempotency key,
// and the ledger holds one refund; the run completes. (A's own tool step
// events may be lost with it: the flow's checkpoint before the call is
// what a resumed attempt trusts, not the events after it.)
func TestFlowRefundKilledAfterToolCall(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	a := startReplicaEnv(t, "A", dsn, cfg, []string{config.DemoLedgerEnv + "=" + ledger, config.DemoPauseAfterEnv + "=issue_refund"})
	b := startReplicaEnv(t, "B", dsn, cfg, []string{config.DemoLedgerEnv + "=" + ledger})
	c := newClient(t)

	run := readJSON[runJSON](t, a.postJSON(t, c, "/v1/agents/refund/messages", `{"text":"I want a refund"}`), http.StatusOK)
	for _, answer := range []string{"A-1001", "damaged"} {
		if run.Status != "input-required" {
			t.Fatalf("run %s is %s before the answer %q, want input-required", run.ID, run.Status, answer)
		}
		run = readJSON[runJSON](t, a.postJSON(t, c, "/v1/runs/"+run.ID+"/input", `{"text":"`+answer+`"}`), http.StatusOK)
	}
	readJSON[runJSON](t, a.postJSON(t, c, "/v1/runs/"+run.ID+"/input?wait=false", `{"text":"yes"}`), http.StatusAccepted)

	// The ledger says the refund was issued; A's tool call is paused.
	deadline := time.Now().Add(testTimeout)
	for ledgerIssues(t, ledger) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no refund in the ledger after %v; A's log:\n%s", testTimeout, a.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.signal(syscall.SIGKILL)
	_ = a.waitExit(t, testTimeout)

	st := waitRun(t, c, b, run.ID, replicaTestTimeout)
	if st.Status != "completed" || st.Attempt < 5 {
		t.Fatalf("run %+v, want completed by B in a later attempt", st)
	}
	if n := ledgerIssues(t, ledger); n != 1 {
		t.Errorf("the ledger holds %d refunds, want 1", n)
	}
	res := b.get(t, "/v1/runs/"+run.ID+"/events")
	defer res.Body.Close()
	var evs []event // every attempt's, until the stream closes after the last run.end
	br := bufio.NewReader(res.Body)
	for {
		ev, err := readEvent(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	checkSeqs(t, evs)
	if len(evs) == 0 || evs[len(evs)-1].typ != "run.end" {
		t.Fatalf("the run's events do not end with run.end")
	}
	key := run.ID + ":refund:1"
	resumedBy := ""
	for _, ev := range evs {
		if ev.typ == "run.start" {
			resumedBy, _ = ev.data["resumed"].(string)
		}
	}
	if resumedBy != "crash" {
		t.Errorf("the last attempt resumed by %q, want crash", resumedBy)
	}
	// A called issue_refund with the key (the ledger recorded it), and B
	// replayed the call with the same key, knowing it for a replay.
	if b, err := os.ReadFile(ledger); err != nil || !bytes.Contains(b, []byte(`"idempotency_key":"`+key+`"`)) {
		t.Errorf("the ledger (%v) does not name the key %s:\n%s", err, key, b)
	}
	if calls := keyedCalls(t, evs, key); len(calls) == 0 || calls[len(calls)-1] != float64(st.Attempt) {
		t.Errorf("issue_refund with key %s in attempts %v, want the last one (%d) among them", key, calls, st.Attempt)
	}
}

// ledgerIssues counts the refunds the demo shop's ledger file records.
func ledgerIssues(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte(`"op":"issue"`))
}

// keyedCalls returns the attempt of every tool step.start whose detail
// carries the idempotency key and says it replays the call.
func keyedCalls(t *testing.T, evs []event, key string) []float64 {
	t.Helper()
	var out []float64
	attempt := 0.0
	for _, ev := range evs {
		switch {
		case ev.typ == "run.start":
			attempt = ev.data["attempt"].(float64)
		case ev.typ == "step.start" && bytes.Contains(mustJSON(t, ev.data), []byte(`"idempotency_key":"`+key+`"`)) &&
			bytes.Contains(mustJSON(t, ev.data), []byte(`"kind":"tool"`)) && bytes.Contains(mustJSON(t, ev.data), []byte(`"replay":true`)):
			out = append(out, attempt)
		}
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
