package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// lgCall is one request of the bad-input table.
type lgCall struct {
	name, key, method, path, body string
	status                        int
}

// TestAgentProtoBadInput: unknown assistants, another tenant's thread, a
// resume with nothing to resume, a checkpoint of another thread and
// malformed bodies get the LangGraph API's status and {"detail"} body,
// and change nothing: the threads' runs are the same afterwards.
func TestAgentProtoBadInput(t *testing.T) { testAgentProtoBadInput(t, "") }

func TestAgentProtoBadInputPostgres(t *testing.T) { testAgentProtoBadInput(t, sharedDSN(t)) }

func testAgentProtoBadInput(t *testing.T, dsn string) {
	s := startWithAuth(t, dsn, authYAML)
	var own, other struct {
		ThreadID string `json:"thread_id"`
	}
	s.call(t, acmeKey, "POST", "/lg/threads", `{"metadata":{"owner":"acme"}}`).json(t, &own)
	s.call(t, acmeKey, "POST", "/lg/threads", `{}`).json(t, &other)
	one := `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"one"}]}}`
	if r := s.call(t, acmeKey, "POST", "/lg/threads/"+own.ThreadID+"/runs/wait", one); r.status != 200 {
		t.Fatalf("acme's run: %d %s", r.status, r.body)
	}
	var history []struct {
		Checkpoint struct {
			ID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	s.call(t, acmeKey, "POST", "/lg/threads/"+own.ThreadID+"/history", `{}`).json(t, &history)
	if len(history) != 1 {
		t.Fatalf("history of one run: %d checkpoints", len(history))
	}
	cp := history[0].Checkpoint.ID
	calls := badLGCalls(own.ThreadID, other.ThreadID, cp)
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.name == "bad Last-Event-ID" {
				hdr = []string{"Last-Event-ID", "x"}
			}
			r := s.call(t, c.key, c.method, c.path, c.body, hdr...)
			if r.status != c.status {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, r.status, r.body, c.status)
			}
			var body struct {
				Detail string `json:"detail"`
			}
			if c.status != 403 && (json.Unmarshal([]byte(r.body), &body) != nil || body.Detail == "") {
				t.Fatalf("body %s, want {\"detail\": …}", r.body)
			}
			if strings.Contains(body.Detail, "store.") || strings.Contains(body.Detail, "store:") || strings.Contains(body.Detail, "json: ") {
				t.Fatalf("detail %q names internals", body.Detail)
			}
		})
	}
	checkUnchanged(t, s, own.ThreadID, other.ThreadID)
}

// badLGCalls are the bad requests of TestAgentProtoBadInput against
// acme's thread own (whose run wrote checkpoint cp) and its thread other.
func badLGCalls(own, other, cp string) []lgCall {
	base := "/lg/threads/" + own
	wait := func(extra string) string {
		return `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"one"}]}` + extra + `}`
	}
	return []lgCall{
		{"unknown assistant", acmeKey, "POST", base + "/runs/wait", `{"assistant_id":"nope","input":{"messages":[{"role":"user","content":"x"}]}}`, 404},
		{"unknown assistant get", acmeKey, "GET", "/lg/assistants/nope", "", 404},
		{"assistant overriding an unknown field", acmeKey, "POST", "/lg/assistants", `{"graph_id":"echo","context":{"modle":"x"}}`, 422},
		{"default assistant write", acmeKey, "PATCH", "/lg/assistants/echo", `{"name":"x"}`, 409},
		{"read-only key creates an assistant", readerKey, "POST", "/lg/assistants", `{"graph_id":"assistant"}`, 403},
		{"other tenant's thread", globexKey, "GET", base, "", 404},
		{"other tenant's state", globexKey, "GET", base + "/state", "", 404},
		{"other tenant's history", globexKey, "POST", base + "/history", `{}`, 404},
		{"other tenant's run", globexKey, "POST", base + "/runs/wait", wait(""), 404},
		{"other tenant's copy", globexKey, "POST", base + "/copy", "", 404},
		{"other tenant's delete", globexKey, "DELETE", base, "", 404},
		{"other tenant's patch", globexKey, "PATCH", base, `{"metadata":{"owner":"globex"}}`, 404},
		{"read-only key writes", readerKey, "POST", base + "/runs/wait", wait(""), 403},
		{"resume with nothing to resume", acmeKey, "POST", base + "/runs/wait", `{"assistant_id":"echo","command":{"resume":"yes"}}`, 422},
		{"checkpoint of another thread", acmeKey, "POST", "/lg/threads/" + other + "/runs/wait", wait(`,"checkpoint_id":"` + cp + `"`), 404},
		{"malformed checkpoint id", acmeKey, "POST", base + "/runs/wait", wait(`,"checkpoint_id":"nodot"`), 422},
		{"unknown checkpoint state", acmeKey, "GET", base + "/state/" + own + ".9", "", 404},
		{"no input", acmeKey, "POST", base + "/runs/wait", `{"assistant_id":"echo"}`, 422},
		{"input without a human message", acmeKey, "POST", base + "/runs/wait", `{"assistant_id":"echo","input":{"messages":[{"role":"ai","content":"x"}]}}`, 422},
		{"unknown stream mode", acmeKey, "POST", base + "/runs/stream", wait(`,"stream_mode":"bogus"`), 422},
		{"unknown multitask strategy", acmeKey, "POST", base + "/runs", wait(`,"multitask_strategy":"sometimes"`), 422},
		{"a delayed run awaited", acmeKey, "POST", base + "/runs/wait", wait(`,"after_seconds":1`), 422},
		{"a negative delay", acmeKey, "POST", base + "/runs", wait(`,"after_seconds":-1`), 422},
		{"a tool_choice that is not a string", acmeKey, "POST", base + "/runs", wait(`,"config":{"configurable":{"tool_choice":3}}`), 422},
		{"a context that is not an object", acmeKey, "POST", base + "/runs", wait(`,"context":[1]`), 422},
		{"other tenant's run delete", globexKey, "DELETE", base + "/runs/" + strings.Split(cp, ".")[0], "", 404},
		{"other tenant's run rollback", globexKey, "POST", base + "/runs/" + strings.Split(cp, ".")[0] + "/cancel?action=rollback", "", 404},
		{"breakpoints", acmeKey, "POST", base + "/runs", wait(`,"interrupt_before":["agent"]`), 422},
		{"wrong type", acmeKey, "POST", base + "/runs", `{"assistant_id":7}`, 422},
		{"not JSON", acmeKey, "POST", "/lg/threads", `{`, 422},
		{"too large", acmeKey, "POST", "/lg/threads", `{"metadata":{"x":"` + strings.Repeat("x", 2<<20) + `"}}`, 413},
		{"bad if_exists", acmeKey, "POST", "/lg/threads", `{"if_exists":"sometimes"}`, 422},
		{"existing thread", acmeKey, "POST", "/lg/threads", `{"thread_id":"` + own + `"}`, 409},
		{"unknown thread", acmeKey, "POST", "/lg/threads/01a22331-0000-7000-8000-000000000000/runs/wait", wait(""), 404},
		{"writing state", acmeKey, "POST", base + "/state", `{"values":{"messages":[]}}`, 422},
		{"bad Last-Event-ID", acmeKey, "GET", base + "/runs/" + strings.Split(cp, ".")[0] + "/stream", "", 422},
	}
}

// checkUnchanged: after the bad requests, own has its one run and its
// metadata, other has no run.
func checkUnchanged(t *testing.T, s *server, own, other string) {
	t.Helper()
	for thread, want := range map[string]int{own: 1, other: 0} {
		var runs []json.RawMessage
		s.call(t, acmeKey, "GET", "/lg/threads/"+thread+"/runs", "").json(t, &runs)
		if len(runs) != want {
			t.Fatalf("thread %s has %d runs after the bad requests, want %d", thread, len(runs), want)
		}
	}
	var th struct {
		Metadata map[string]any `json:"metadata"`
	}
	s.call(t, acmeKey, "GET", "/lg/threads/"+own, "").json(t, &th)
	if th.Metadata["owner"] != "acme" {
		t.Fatalf("acme's thread metadata %v after globex's patch", th.Metadata)
	}
}
