package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// Approvals and governance of a loop agent's tool calls, through the HTTP
// API of a real server (REST and a2a-go's client), on memstore and on
// PostgreSQL: the demo's guarded agent, one with a short approval timeout,
// and two whose governor never answers (enforce fails closed, audit lets
// the call through).

// approvalRun is a run as GET /v1/runs/{id} shows it, with its pending
// approvals.
type approvalRun struct {
	runJSON
	PendingApprovals []struct {
		CallID    string          `json:"call_id"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"pending_approvals"`
}

// lastText is the text of the run's last message.
func (r approvalRun) lastText() string {
	if len(r.Messages) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range r.Messages[len(r.Messages)-1].Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// guardedConfig writes the demo configuration plus the test agents: a
// guarded agent whose approvals time out, and agents whose governor (at
// governorURL) is asked about every read.
func guardedConfig(t *testing.T, governorURL string) string {
	t.Helper()
	return demoConfigWith(t, func(cfg map[string]any) {
		governed := func(id, mode string) map[string]any {
			return map[string]any{"id": id, "engine": "loop", "provider": "guarded-script", "tools": []string{"read_file"},
				"governance": map[string]any{"mode": mode, "governor": map[string]any{"url": governorURL, "timeout": "200ms", "allow_private": true}}}
		}
		cfg["agents"] = append(cfg["agents"].([]any),
			map[string]any{"id": "hasty", "engine": "loop", "provider": "guarded-script", "tools": []string{"delete_file"}, "approval_timeout": "300ms"},
			governed("governed", "enforce"), governed("audited", "audit"))
	})
}

// silentGovernor is a governor that never answers: it holds each review
// until the caller gives up.
func silentGovernor(t *testing.T) string {
	t.Helper()
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body: only then does the server notice the client
		// hanging up (and cancel r's context).
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-gone:
		}
	}))
	t.Cleanup(func() {
		close(gone)
		srv.Close()
	})
	return srv.URL
}

// startStore starts the server in-process on the configuration at cfg,
// on PostgreSQL when dsn is set, else on memstore.
func startStore(t *testing.T, cfg, dsn string) *server {
	t.Helper()
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return dsn
		}
		return ""
	}
	return startEnv(t, getenv, "--config", cfg)
}

// postApproval posts body as JSON to path and decodes the run answered.
func (s *server) postJSONRun(t *testing.T, path, body string) (int, approvalRun) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var run approvalRun
	_ = json.NewDecoder(res.Body).Decode(&run)
	return res.StatusCode, run
}

// eachStore runs f on memstore and on PostgreSQL.
func eachStore(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Run("memstore", func(t *testing.T) { f(t, "") })
	t.Run("postgres", func(t *testing.T) {
		skipShort(t)
		f(t, sharedDSN(t))
	})
}

func TestApprovalsOverREST(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, guardedConfig(t, silentGovernor(t)), dsn)
		// An allowed read runs at once; a read under /etc is denied.
		if _, run := s.postJSONRun(t, "/v1/agents/guarded/messages", `{"text":"read notes.txt"}`); run.Status != "completed" ||
			!strings.Contains(run.lastText(), "contents of notes.txt") {
			t.Fatalf("read: %s %q", run.Status, run.lastText())
		}
		if _, run := s.postJSONRun(t, "/v1/agents/guarded/messages", `{"text":"read /etc/passwd"}`); run.Status != "completed" ||
			!strings.Contains(run.lastText(), "denied by policy: nothing under /etc") {
			t.Fatalf("read /etc: %s %q", run.Status, run.lastText())
		}

		// A delete waits, naming its call; an answer to another call is a
		// 409; an edit runs the edited call.
		_, run := s.postJSONRun(t, "/v1/agents/guarded/messages", `{"text":"delete notes.txt"}`)
		if run.Status != "input-required" || len(run.PendingApprovals) != 1 || run.PendingApprovals[0].Tool != "delete_file" {
			t.Fatalf("delete: %s, pending %+v; want input-required with the delete_file call", run.Status, run.PendingApprovals)
		}
		got := readJSON[approvalRun](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
		call := got.PendingApprovals[0]
		if call.CallID == "" || string(call.Arguments) != `{"path":"notes.txt"}` {
			t.Fatalf("GET: pending %+v", got.PendingApprovals)
		}
		if code, _ := s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", `{"approvals":[{"call_id":"other","decision":"approve"}]}`); code != http.StatusConflict {
			t.Fatalf("answer to an unknown call: %d, want 409", code)
		}
		if code, _ := s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", `{"approvals":[{"call_id":"`+call.CallID+`","decision":"maybe"}]}`); code != http.StatusBadRequest {
			t.Fatalf("answer with a bad decision: %d, want 400", code)
		}
		code, done := s.postJSONRun(t, "/v1/runs/"+run.ID+"/input",
			`{"approvals":[{"call_id":"`+call.CallID+`","decision":"edit","arguments":{"path":"old.txt"}}]}`)
		if code != http.StatusOK || done.Status != "completed" || done.lastText() != "The tool answered: deleted old.txt" {
			t.Fatalf("after the edit: %d %s %q", code, done.Status, done.lastText())
		}
		if code, _ := s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", `{"approvals":[{"call_id":"`+call.CallID+`","decision":"approve"}]}`); code != http.StatusConflict {
			t.Fatalf("second answer: %d, want 409", code)
		}

		// The log names the calls in its input event and holds every verdict.
		evs := runEvents(t, s, run.ID)
		var input, verdicts int
		for _, ev := range evs {
			b, _ := json.Marshal(ev.data)
			switch ev.typ {
			case "input":
				if strings.Contains(string(b), `"pending_approvals"`) && strings.Contains(string(b), call.CallID) {
					input++
				}
			case "governance":
				verdicts++
			}
		}
		if input != 1 || verdicts < 3 {
			t.Fatalf("events: %d input events naming the call, %d governance events; want 1 and ≥3", input, verdicts)
		}
	})
}

func TestApprovalsOverA2A(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, guardedConfig(t, silentGovernor(t)), dsn)
		c := guardedA2A(t, s)
		res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("delete plan.md"))})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
			t.Fatalf("delete over A2A: %#v, want an input-required task", res)
		}
		var pending []map[string]any
		for _, p := range task.Status.Message.Parts {
			if d, ok := p.Data().(map[string]any); ok {
				b, _ := json.Marshal(d["pending_approvals"])
				_ = json.Unmarshal(b, &pending)
			}
		}
		if len(pending) != 1 || pending[0]["tool"] != "delete_file" {
			t.Fatalf("status message data: %v, want the delete_file call", pending)
		}
		answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"approvals": []any{
			map[string]any{"call_id": pending[0]["call_id"], "decision": "reject", "reason": "keep the plan"}}}))
		answer.TaskID = task.ID
		res, err = c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: answer})
		if err != nil {
			t.Fatal(err)
		}
		done := res.(*a2a.Task)
		last := done.History[len(done.History)-1].Parts[0].Text()
		if done.Status.State != a2a.TaskStateCompleted || !strings.Contains(last, "rejected by the user: keep the plan") {
			t.Fatalf("after the rejection: %s %q", done.Status.State, last)
		}
		// Governance over A2A: an enforce rule denies a read under /etc,
		// and the model reads why.
		res, err = c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("read /etc/passwd"))})
		if err != nil {
			t.Fatal(err)
		}
		denied := res.(*a2a.Task)
		last = denied.History[len(denied.History)-1].Parts[0].Text()
		if denied.Status.State != a2a.TaskStateCompleted || !strings.Contains(last, "denied by policy: nothing under /etc") {
			t.Fatalf("read /etc over A2A: %s %q, want completed with the policy's denial", denied.Status.State, last)
		}
	})
}

// guardedA2A is an a2a-go JSON-RPC client of the guarded agent.
func guardedA2A(t *testing.T, s *server) *a2aclient.Client {
	t.Helper()
	iface := &a2a.AgentInterface{URL: s.base + "/agents/guarded/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{iface})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// TestConcurrentApprovals: two answers to one parked call at once — one
// approves, one rejects. Exactly one is taken (200), the other is a 409,
// and the run's result is the winner's.
func TestConcurrentApprovals(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, guardedConfig(t, silentGovernor(t)), dsn)
		for range 5 {
			_, run := s.postJSONRun(t, "/v1/agents/guarded/messages", `{"text":"delete race.txt"}`)
			if run.Status != "input-required" {
				t.Fatalf("delete: %s", run.Status)
			}
			id := run.PendingApprovals[0].CallID
			codes := make([]int, 2)
			runs := make([]approvalRun, 2)
			var wg sync.WaitGroup
			for i, decision := range []string{"approve", "reject"} {
				wg.Go(func() {
					codes[i], runs[i] = s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", `{"approvals":[{"call_id":"`+id+`","decision":"`+decision+`"}]}`)
				})
			}
			wg.Wait()
			winner := -1
			for i, code := range codes {
				switch code {
				case http.StatusOK:
					winner = i
				case http.StatusConflict:
				default:
					t.Fatalf("answer %d: HTTP %d", i, code)
				}
			}
			if winner < 0 || codes[0] == codes[1] {
				t.Fatalf("codes %v: want one 200 and one 409", codes)
			}
			want := []string{"deleted race.txt", "rejected by the user"}[winner]
			final := readJSON[approvalRun](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
			if !strings.Contains(runs[winner].lastText(), want) || final.Status != "completed" {
				t.Fatalf("winner %d: %q, run %s; want %q", winner, runs[winner].lastText(), final.Status, want)
			}
		}
	})
}

// TestApprovalTimeout: nobody answers; the sweep finds the expired prompt
// and the call is rejected, the model told why.
func TestApprovalTimeout(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, guardedConfig(t, silentGovernor(t)), dsn)
		_, run := s.postJSONRun(t, "/v1/agents/hasty/messages", `{"text":"delete late.txt"}`)
		if run.Status != "input-required" {
			t.Fatalf("delete: %s", run.Status)
		}
		deadline := time.Now().Add(testTimeout)
		for {
			got := readJSON[approvalRun](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
			if got.Status == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run still %s after %v", got.Status, testTimeout)
			}
			time.Sleep(50 * time.Millisecond)
		}
		var text string
		for _, ev := range runEvents(t, s, run.ID) {
			if ev.typ == "delta" {
				if tr, ok := ev.data["tool_result"].(map[string]any); ok {
					text, _ = tr["content"].(string)
				}
			}
		}
		if !strings.Contains(text, "not approved within the approval timeout of 300ms") {
			t.Fatalf("tool result %q, want the timeout's rejection", text)
		}
		if code, _ := s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", `{"text":"approve"}`); code != http.StatusConflict {
			t.Fatalf("answer after the timeout: %d, want 409", code)
		}
	})
}

// TestGovernorThatNeverAnswers: in enforce mode the call is denied when the
// governor's timeout passes (fail closed); in audit mode it runs, the
// verdict recorded as not enforced.
func TestGovernorThatNeverAnswers(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, guardedConfig(t, silentGovernor(t)), dsn)
		_, run := s.postJSONRun(t, "/v1/agents/governed/messages", `{"text":"read notes.txt"}`)
		if run.Status != "completed" || !strings.Contains(run.lastText(), "denied by policy: governor (no verdict within 200ms)") {
			t.Fatalf("enforce: %s %q", run.Status, run.lastText())
		}
		_, run = s.postJSONRun(t, "/v1/agents/audited/messages", `{"text":"read notes.txt"}`)
		if run.Status != "completed" || !strings.Contains(run.lastText(), "contents of notes.txt") {
			t.Fatalf("audit: %s %q", run.Status, run.lastText())
		}
		var audit map[string]any
		for _, ev := range runEvents(t, s, run.ID) {
			if ev.typ == "governance" {
				audit, _ = ev.data["payload"].(map[string]any)
			}
		}
		if audit["verdict"] != "deny" || audit["enforced"] != false || audit["mode"] != "audit" {
			t.Fatalf("audit verdict %v, want an unenforced deny", audit)
		}
	})
}
