package main

// Process-level tests of the fault windows a chaos run found (issue 21):
// real bin/server replicas on a real PostgreSQL, killed, stopped and cut
// off at the moments each defect needed.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/jackc/pgx/v5"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/pgtest"
)

// TestCreateAndLeaseAreOneCommit: a replica killed while the task it is
// creating waits for its lease leaves no run behind that nobody executes.
// The leases table is locked, a message is posted to A, A is killed; then
// the same message (same id) is sent to B. The run must complete. Before
// the fix, A committed the task and answered 202, its worker then blocked
// on the lease, and the run stayed working forever, the retry answering it.
func TestCreateAndLeaseAreOneCommit(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	lock := dbConn(t, dsn)
	tx, err := lock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE leases IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	body := `{"context_id": "c-orphan", "message": {"id": "m-orphan", "role": "user", "parts": [{"type": "text", "text": "stream 20 every 10ms"}]}}`
	var posted sync.WaitGroup
	posted.Go(func() {
		// A's answer does not matter: before the fix a 202, after it none.
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/v1/agents/echo/messages?wait=false", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if res, err := c.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	})
	time.Sleep(time.Second) // A is at its commit (or past it) by now
	a.signal(syscall.SIGKILL)
	_ = a.waitExit(t, testTimeout)
	posted.Wait()
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	res := b.postJSON(t, c, "/v1/agents/echo/messages?wait=false", body)
	run := readJSON[runJSON](t, res, http.StatusAccepted)
	st := waitRun(t, c, b, run.ID, 15*time.Second)
	if st.Status != "completed" {
		t.Fatalf("run %s after A died at its creation: %+v, want completed (an orphan nobody executes)", run.ID, st)
	}
}

// TestCheckpointNeverAheadOfItsEvents: event writes fail (a trigger raises
// a retryable error) from a point mid-stream; A is killed once its
// checkpoint would have been stored; B resumes the run. Every token of the
// answer must be in the log as a delta: before the fix the checkpoint was
// stored ahead of the deltas it covered, B resumed from it and completed
// without streaming them again, and they were in no stream at all.
func TestCheckpointNeverAheadOfItsEvents(t *testing.T) {
	skipShort(t)
	const tokens = 150
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	db := dbConn(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := a.submit(t, c, fmt.Sprintf("stream %d every 10ms", tokens))
	f := &follower{c: c, runID: id}
	deltas, strike := 0, make(chan struct{})
	f.each = func(ev event) {
		if ev.typ == "delta" {
			deltas++
		}
		if deltas == 20 {
			f.each = nil
			close(strike)
		}
	}
	// A's stream stalls once writes fail: read it in the background.
	streamCtx, stopStream := context.WithCancel(ctx)
	var reading sync.WaitGroup
	reading.Go(func() { _ = f.attach(streamCtx, a.base) })
	select {
	case <-strike:
	case <-ctx.Done():
		t.Fatal("the run streamed no 20 deltas")
	}
	failEventWrites(t, dsn)

	// The model's stream ends after tokens×10ms; the checkpoint follows.
	deadline := time.Now().Add(time.Duration(tokens)*10*time.Millisecond + 3*time.Second)
	for time.Now().Before(deadline) && checkpoints(t, db, id) == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	stored := checkpoints(t, db, id)
	a.signal(syscall.SIGKILL)
	_ = a.waitExit(t, testTimeout)
	stopStream()
	reading.Wait()
	allowEventWrites(t, dsn)
	t.Logf("A killed with %d checkpoint(s) stored while event writes failed", stored)

	all := &follower{c: c, runID: id}
	all.follow(ctx, t, b.base)
	checkExactlyOnce(t, all.evs)
	if missing := missingTokens(all.evs, tokens); len(missing) > 0 {
		t.Errorf("%d of %d tokens are in no delta of the log (first: %s): the resumed attempt trusted a checkpoint ahead of its events",
			len(missing), tokens, missing[0])
	}
}

// TestLiveOwnerKeepsItsRunsAcrossAnOutage: the database stops for longer
// than the lease, so every lease expires; when it is back, the owner is
// frozen (SIGSTOP) for half a lease while the other replica sweeps. The
// owner must keep its runs: one attempt each, nothing abandoned. Before the
// fix the sweep took the expired leases the moment the database was back.
func TestLiveOwnerKeepsItsRunsAcrossAnOutage(t *testing.T) {
	skipShort(t)
	const lease = 4 * time.Second
	db := pgtest.NewCluster(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": lease.String()})
	a := startReplica(t, "A", db.DSN(), cfg)
	startReplica(t, "B", db.DSN(), cfg) // sweeps for expired leases
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*replicaTestTimeout)
	defer cancel()

	var ids []string
	for range 6 {
		ids = append(ids, a.submit(t, c, "stream 300 every 40ms"))
	}
	time.Sleep(500 * time.Millisecond)
	if err := db.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease + time.Second) // every lease has expired
	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	a.signal(syscall.SIGSTOP)
	time.Sleep(lease / 2)
	a.signal(syscall.SIGCONT)

	for _, id := range ids {
		st := waitRun(t, c, a, id, 40*time.Second)
		if st.Status != "completed" || st.Attempt != 1 {
			t.Errorf("run %s: %+v, want completed in attempt 1 (its live owner kept it)", id, st)
		}
	}
	if strings.Contains(a.logs.String(), "run abandoned") {
		t.Errorf("A abandoned runs it was executing:\n%s", a.logs)
	}
}

// TestStoreOutageHidesItsCause: during an outage clients are told to retry
// (503 with Retry-After, JSON-RPC -32000) and nothing about the database:
// no address, user or driver message.
func TestStoreOutageHidesItsCause(t *testing.T) {
	skipShort(t)
	db := pgtest.NewCluster(t)
	cfg := writeConfig(t, nil)
	a := startReplica(t, "A", db.DSN(), cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()
	id := a.submit(t, c, "hello")
	waitRun(t, c, a, id, 10*time.Second)
	if err := db.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Start(context.Background()) })

	res := a.get(t, "/v1/runs/"+id)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("GET run during the outage: %d, Retry-After %q, want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	wantNoDatabaseDetails(t, "REST problem", string(body))

	rpc := `{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "` + id + `"}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/agents/echo/jsonrpc", strings.NewReader(rpc))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(body, []byte("-32000")) {
		t.Errorf("JSON-RPC GetTask during the outage: %s, want error -32000", body)
	}
	wantNoDatabaseDetails(t, "JSON-RPC error", string(body))

	// A send does not hang on the database: a retryable 503 within the
	// submission's patience. So is a blocking send in a new conversation:
	// once the replica has found the store unreachable (its lease sweep,
	// every second), its create is no longer left for the run's end.
	for _, send := range []struct{ what, path string }{
		{"send", "/v1/agents/echo/messages?wait=false"},
		{"blocking send", "/v1/agents/echo/messages"},
	} {
		began := time.Now()
		res = a.postJSON(t, c, send.path, `{"text": "while down"}`)
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s during the outage: %d after %v, want 503 with Retry-After", send.what, res.StatusCode, time.Since(began))
		}
		wantNoDatabaseDetails(t, send.what+" problem", string(body))
	}
	res = a.get(t, "/readyz")
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz during the outage: %d", res.StatusCode)
	}
	wantNoDatabaseDetails(t, "/readyz", string(body))
}

// TestA2AClientsGetOneAnswerAcrossAKill: an A2A client streams a run whose
// replica is killed mid-answer and resubscribes on another replica with
// the resume extension. Applying the updates as the spec says (append or
// replace), it must hold exactly one answer artifact, the whole answer —
// and GetTask must report the same.
func TestA2AClientsGetOneAnswerAcrossAKill(t *testing.T) {
	skipShort(t)
	const tokens = 120
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	ca := a2aClient(t, a)
	held := map[a2a.ArtifactID]*a2a.Artifact{}
	var taskID a2a.TaskID
	var lastSeq int64
	chunks := 0
	streamCtx, stop := context.WithCancel(ctx)
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("stream %d every 20ms", tokens)))}
	for ev, err := range ca.SendStreamingMessage(streamCtx, req) {
		if err != nil {
			break
		}
		taskID, lastSeq = noteUpdate(held, ev, taskID, lastSeq)
		if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			// Deltas coalesce when the client is slow: strike early.
			if chunks++; chunks == 10 {
				a.signal(syscall.SIGKILL)
			}
		}
	}
	stop()
	if chunks < 10 {
		t.Fatalf("the stream on A ended after %d chunks, before the kill", chunks)
	}
	_ = a.waitExit(t, testTimeout)

	cb := a2aClient(t, b)
	resume := a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {strconv.FormatInt(lastSeq, 10)}})
	for ev, err := range cb.SubscribeToTask(resume, &a2a.SubscribeToTaskRequest{ID: taskID}) {
		if err != nil {
			t.Fatalf("resubscribe on B after seq %d: %v", lastSeq, err)
		}
		taskID, lastSeq = noteUpdate(held, ev, taskID, lastSeq)
	}
	want := strings.Join(toks(tokens), " ")
	if len(held) != 1 {
		t.Errorf("the streaming client holds %d artifacts, want exactly one answer", len(held))
	}
	for id, art := range held {
		if got := artifactText(art); got != want {
			t.Errorf("streamed artifact %s: %q…, want the whole answer (%d bytes, got %d)", id, head(got), len(want), len(got))
		}
	}
	task, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Artifacts) != 1 || artifactText(task.Artifacts[0]) != want {
		t.Errorf("GetTask: %d artifacts, want one with the whole answer", len(task.Artifacts))
	}
}

// noteUpdate applies a stream event to the artifacts a client holds and
// returns the task id and the last seq it has seen.
func noteUpdate(held map[a2a.ArtifactID]*a2a.Artifact, ev a2a.Event, task a2a.TaskID, last int64) (a2a.TaskID, int64) {
	var meta map[string]any
	switch e := ev.(type) {
	case *a2a.Task:
		task = e.ID
	case *a2a.TaskStatusUpdateEvent:
		task, meta = e.TaskID, e.Metadata
	case *a2a.TaskArtifactUpdateEvent:
		task, meta = e.TaskID, e.Metadata
		cur := held[e.Artifact.ID]
		if cur == nil || !e.Append {
			cp := *e.Artifact
			cp.Parts = nil
			cur = &cp
		}
		cur.Parts = append(cur.Parts, e.Artifact.Parts...)
		held[e.Artifact.ID] = cur
	}
	if s, ok := meta[agenta2a.MetaSeq].(float64); ok {
		last = int64(s)
	}
	return task, last
}

func artifactText(a *a2a.Artifact) string {
	var sb strings.Builder
	for _, p := range a.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			sb.WriteString(string(t))
		}
	}
	return sb.String()
}

func head(s string) string { return s[:min(len(s), 40)] }

// a2aClient is an a2a-go client of r's echo agent over JSON-RPC v1.0.
func a2aClient(t *testing.T, r *replica) *a2aclient.Client {
	t.Helper()
	iface := &a2a.AgentInterface{URL: r.base + "/agents/echo/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{iface})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// dbConn is a connection to dsn, closed at cleanup.
func dbConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// failEventWrites makes every insert of event frames in dsn's database fail
// with SQLSTATE 57P03 (cannot_connect_now, which pgstore retries) until
// allowEventWrites; cleanup allows them again in any case, for the
// database outlives the test (pgtest recycles it).
func failEventWrites(t *testing.T, dsn string) {
	t.Helper()
	execSQL(t, dsn, `CREATE OR REPLACE FUNCTION fail_event_writes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'event writes disabled by the test' USING ERRCODE = '57P03'; END $$;
CREATE TRIGGER fail_event_writes BEFORE INSERT ON event_frames FOR EACH ROW EXECUTE FUNCTION fail_event_writes()`)
	t.Cleanup(func() { allowEventWrites(t, dsn) })
}

func allowEventWrites(t *testing.T, dsn string) {
	t.Helper()
	execSQL(t, dsn, `DROP TRIGGER IF EXISTS fail_event_writes ON event_frames; DROP FUNCTION IF EXISTS fail_event_writes()`)
}

// execSQL runs sql on a connection of its own.
func execSQL(t *testing.T, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

// checkpoints counts the stored checkpoints of run.
func checkpoints(t *testing.T, db *pgx.Conn, run string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM checkpoints WHERE run_id = $1`, run).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// missingTokens lists the tokens tok1…tokN that no delta of evs carries.
func missingTokens(evs []event, n int) []string {
	seen := map[string]bool{}
	for _, ev := range evs {
		if text, _ := ev.data["text"].(string); ev.typ == "delta" {
			for _, w := range strings.Fields(text) {
				seen[w] = true
			}
		}
	}
	var missing []string
	for _, tok := range toks(n) {
		if !seen[tok] {
			missing = append(missing, tok)
		}
	}
	return missing
}

// waitRun polls r for run id until it is terminal or within passes.
func waitRun(t *testing.T, c *http.Client, r *replica, id string, within time.Duration) runState {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st := r.run(t, c, id)
		if terminal(st.Status) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postJSON posts body to r's path.
func (r *replica) postJSON(t *testing.T, c *http.Client, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, r.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s on %s: %v", path, r.name, err)
	}
	return res
}

// get is a GET of r's path.
func (r *replica) get(t *testing.T, path string) *http.Response {
	t.Helper()
	res, err := http.Get(r.base + path)
	if err != nil {
		t.Fatalf("GET %s on %s: %v", path, r.name, err)
	}
	return res
}

// wantNoDatabaseDetails fails if what a client got names the database.
func wantNoDatabaseDetails(t *testing.T, what, body string) {
	t.Helper()
	for _, leak := range []string{"127.0.0.1", "user=", "database=", "pgstore", "dial", "connect"} {
		if strings.Contains(body, leak) {
			t.Errorf("%s tells the client %q: %s", what, leak, body)
		}
	}
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		t.Errorf("%s is not JSON: %s", what, body)
	}
}
