package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// assistantView is what the REST API answers for an assistant's version.
type assistantView struct {
	ID      string         `json:"id"`
	AgentID string         `json:"agent_id"`
	Version int            `json:"version"`
	Name    string         `json:"name"`
	Context map[string]any `json:"context"`
}

// whoAreYou sends "who are you?" to the assistant agent on assistant id
// (none when empty) as key, and answers the run's reply: the demo rule
// quotes the system prompt and model the run was configured with.
func whoAreYou(t *testing.T, s *server, key, id string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"text": "who are you?", "assistant_id": id})
	r := s.call(t, key, "POST", "/v1/agents/assistant/messages", string(body))
	if r.status != 200 {
		t.Fatalf("send on assistant %q: %d %s", id, r.status, r.body)
	}
	var run struct {
		Status   string `json:"status"`
		Messages []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"messages"`
		Metadata map[string]any `json:"metadata"`
	}
	r.json(t, &run)
	last := run.Messages[len(run.Messages)-1]
	if run.Status != "completed" || last.Role != "agent" && last.Role != "assistant" {
		t.Fatalf("run: %s", r.body)
	}
	return last.Parts[0].Text
}

// TestAssistantsREST: the REST routes over memstore with two tenants: a
// refused override names its field and stores nothing; runs on each
// version show its system prompt and model; versions, set latest, delete;
// another tenant and a read-only key get nothing.
func TestAssistantsREST(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	bad := s.call(t, acmeKey, "POST", "/v1/assistants", `{"agent_id":"assistant","context":{"modle":"x"}}`)
	var problem struct {
		Field  string `json:"field"`
		Detail string `json:"detail"`
	}
	bad.json(t, &problem)
	if bad.status != 400 || problem.Field != "context.modle" || !strings.Contains(problem.Detail, "model") {
		t.Fatalf("a misspelt override: %d %s", bad.status, bad.body)
	}
	if r := s.call(t, acmeKey, "GET", "/v1/assistants", ""); !strings.Contains(r.body, `"assistants":[]`) {
		t.Fatalf("stored after a refusal: %s", r.body)
	}
	if r := s.call(t, readerKey, "POST", "/v1/assistants", `{"agent_id":"assistant"}`); r.status != 403 {
		t.Fatalf("a read-only key creates: %d %s", r.status, r.body)
	}
	var a assistantView
	created := s.call(t, acmeKey, "POST", "/v1/assistants", `{"agent_id":"assistant","name":"ada","context":{"system_prompt":"You are Ada.","model":"ada-1"}}`)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	created.json(t, &a)
	if got := whoAreYou(t, s, acmeKey, a.ID); got != "My instructions: You are Ada. (model ada-1)" {
		t.Fatalf("version 1 answered %q", got)
	}
	if got := whoAreYou(t, s, acmeKey, ""); strings.Contains(got, "Ada") {
		t.Fatalf("the agent itself answered %q", got)
	}
	if r := s.call(t, acmeKey, "PATCH", "/v1/assistants/"+a.ID, `{"context":{"system_prompt":"You are Bob."}}`); r.status != 200 || !strings.Contains(r.body, `"version":2`) {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if got := whoAreYou(t, s, acmeKey, a.ID); got != "My instructions: You are Bob." {
		t.Fatalf("version 2 answered %q", got)
	}
	if r := s.call(t, acmeKey, "GET", "/v1/assistants/"+a.ID+"/versions", ""); strings.Count(r.body, `"version":`) != 2 {
		t.Fatalf("versions: %s", r.body)
	}
	if r := s.call(t, acmeKey, "POST", "/v1/assistants/"+a.ID+"/latest", `{"version":1}`); r.status != 200 {
		t.Fatalf("set latest: %d %s", r.status, r.body)
	}
	if got := whoAreYou(t, s, acmeKey, a.ID); !strings.Contains(got, "Ada") {
		t.Fatalf("version 1 again answered %q", got)
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/assistants/" + a.ID, ""},
		{"PATCH", "/v1/assistants/" + a.ID, `{"name":"x"}`},
		{"DELETE", "/v1/assistants/" + a.ID, ""},
		{"POST", "/v1/agents/assistant/messages", `{"text":"who are you?","assistant_id":"` + a.ID + `"}`},
	} {
		if r := s.call(t, globexKey, c.method, c.path, c.body); r.status != 404 {
			t.Errorf("another tenant's %s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	if r := s.call(t, acmeKey, "DELETE", "/v1/assistants/"+a.ID, ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := s.call(t, acmeKey, "GET", "/v1/assistants/"+a.ID, ""); r.status != 404 {
		t.Fatalf("after delete: %d %s", r.status, r.body)
	}
}

// TestAssistantsAcrossReplicasPostgres: two servers on one database; what
// one writes, the other's next run uses, with no restart and no wait.
func TestAssistantsAcrossReplicasPostgres(t *testing.T) {
	dsn := sharedDSN(t)
	one, two := startWithAuth(t, dsn, authYAML), startWithAuth(t, dsn, authYAML)
	var a assistantView
	one.call(t, acmeKey, "POST", "/v1/assistants", `{"agent_id":"assistant","context":{"system_prompt":"You are Ada."}}`).json(t, &a)
	if got := whoAreYou(t, two, acmeKey, a.ID); got != "My instructions: You are Ada." {
		t.Fatalf("the other replica answered %q", got)
	}
	one.call(t, acmeKey, "PATCH", "/v1/assistants/"+a.ID, `{"context":{"system_prompt":"You are Bob."}}`)
	if got := whoAreYou(t, two, acmeKey, a.ID); got != "My instructions: You are Bob." {
		t.Fatalf("after an update on the first replica, the other answered %q", got)
	}
	two.call(t, acmeKey, "POST", "/v1/assistants/"+a.ID+"/latest", `{"version":1}`)
	if got := whoAreYou(t, one, acmeKey, a.ID); got != "My instructions: You are Ada." {
		t.Fatalf("after set latest on the second replica, the first answered %q", got)
	}
}

// TestAssistantRunKeepsItsVersion: a run takes the assistant's latest
// version when it is sent and keeps it: a delayed run sent on version 1,
// the assistant updated before it starts, still answers as version 1 (it
// starts through the recovery sweep, from what its metadata recorded).
func TestAssistantRunKeepsItsVersion(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	var a assistantView
	s.call(t, acmeKey, "POST", "/v1/assistants", `{"agent_id":"assistant","context":{"system_prompt":"You are Ada."}}`).json(t, &a)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	s.call(t, acmeKey, "POST", "/lg/threads", `{}`).json(t, &th)
	var run struct {
		RunID       string `json:"run_id"`
		AssistantID string `json:"assistant_id"`
	}
	sent := s.call(t, acmeKey, "POST", "/lg/threads/"+th.ThreadID+"/runs",
		`{"assistant_id":"`+a.ID+`","after_seconds":1,"input":{"messages":[{"role":"user","content":"who are you?"}]}}`)
	sent.json(t, &run)
	if sent.status != 200 || run.AssistantID != a.ID {
		t.Fatalf("delayed run: %d %s", sent.status, sent.body)
	}
	if r := s.call(t, acmeKey, "PATCH", "/v1/assistants/"+a.ID, `{"context":{"system_prompt":"You are Bob."}}`); r.status != 200 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	joined := s.call(t, acmeKey, "GET", "/lg/threads/"+th.ThreadID+"/runs/"+run.RunID+"/join", "")
	if !strings.Contains(joined.body, "My instructions: You are Ada.") {
		t.Fatalf("the delayed run answered %d %s", joined.status, joined.body)
	}
	if got := whoAreYou(t, s, acmeKey, a.ID); got != "My instructions: You are Bob." {
		t.Fatalf("a run sent after the update answered %q", got)
	}
}
