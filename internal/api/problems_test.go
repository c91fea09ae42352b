package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"agentd/internal/api"
)

// problem checks that r is an RFC 9457 problem of the status, whose detail
// mentions every fragment and whose field is field ("" = none expected).
func problem(t *testing.T, r response, status int, field string, fragments ...string) api.Problem {
	t.Helper()
	if r.status != status {
		t.Errorf("HTTP status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	var p api.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	if p.Status != status {
		t.Errorf("problem status %d, want %d (the HTTP status): %s", p.Status, status, r.body)
	}
	if p.Title == "" || p.Detail == "" || p.Type == "" {
		t.Errorf("problem lacks type, title or detail: %s", r.body)
	}
	if p.Field != field {
		t.Errorf("problem field %q, want %q: %s", p.Field, field, r.body)
	}
	for _, f := range fragments {
		if !strings.Contains(p.Detail, f) {
			t.Errorf("detail %q does not mention %q", p.Detail, f)
		}
	}
	return p
}

// TestBadInputProblems sends malformed requests: each gets a precise
// problem and leaves no run behind.
func TestBadInputProblems(t *testing.T) {
	e := newEnv(t, api.Options{MaxBodyBytes: 512})
	done := e.send("echo", "", map[string]string{"text": "hello"})
	before := e.total()

	deep := `{"text":"x","metadata":` + strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70) + "}"
	textPart := `"parts":[{"type":"text","text":"hi"}]`
	msgs := "/v1/agents/echo/messages"
	cases := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		field                    string
		mentions                 []string
	}{
		{"malformed JSON", "POST", msgs, `{"text": "hi"`, nil, 400, "", []string{"malformed JSON"}},
		{"syntax error position", "POST", msgs, "{\n \"text\": hi}", nil, 400, "", []string{"line 2"}},
		{"unknown field", "POST", msgs, `{"text":"hi","colour":"red"}`, nil, 400, "colour", []string{"unknown field"}},
		{"wrong type", "POST", msgs, `{"text":42}`, nil, 400, "text", nil},
		{"unknown field in the message", "POST", msgs, `{"message":{"role":"user",` + textPart + `,"colour":"red"}}`, nil, 400, "message.colour", []string{"unknown field"}},
		{"unknown field in a part", "POST", msgs, `{"message":{"role":"user","parts":[{"type":"text","text":"hi","zz":1}]}}`, nil, 400, "message.parts[0].zz", []string{"unknown field"}},
		{"wrong type in the message", "POST", msgs, `{"message":{"role":"user","parts":"hi"}}`, nil, 400, "message.parts", nil},
		{"unknown part type", "POST", msgs, `{"message":{"role":"user","parts":[{"type":"image"}]}}`, nil, 400, "message.parts[0].type", []string{"image"}},
		{"body not an object", "POST", msgs, `["hi"]`, nil, 400, "", []string{"JSON object"}},
		{"unsupported content type", "POST", msgs, `{"text":"hi"}`, []string{"Content-Type", "text/plain"}, 415, "", []string{"text/plain"}},
		{"trailing data", "POST", msgs, `{"text":"hi"} {}`, nil, 400, "", []string{"after the JSON object"}},
		{"empty body", "POST", msgs, ``, nil, 400, "", []string{"empty"}},
		{"message and text", "POST", msgs, `{"text":"hi","message":{"role":"user",` + textPart + `}}`, nil, 400, "text", []string{"not both"}},
		{"neither message nor text", "POST", msgs, `{"context_id":"c"}`, nil, 400, "message", []string{"required"}},
		{"empty text", "POST", msgs, `{"text":""}`, nil, 400, "text", []string{"must not be empty"}},
		{"null text", "POST", msgs, `{"text":null}`, nil, 400, "message", []string{"required"}},
		{"charset not UTF-8", "POST", msgs, `{"text":"hi"}`, []string{"Content-Type", "application/json; charset=latin1"}, 415, "", []string{"latin1"}},
		{"empty parts", "POST", msgs, `{"message":{"role":"user","parts":[]}}`, nil, 400, "message.parts", []string{"empty"}},
		{"wrong role", "POST", msgs, `{"message":{"role":"agent",` + textPart + `}}`, nil, 400, "message.role", []string{"agent"}},
		{"oversized body", "POST", msgs, `{"text":"` + strings.Repeat("x", 600) + `"}`, nil, 413, "", []string{"512 bytes"}},
		{"deep nesting", "POST", msgs, deep, nil, 400, "", []string{"nests", "64"}},
		{"bad stream flag", "POST", msgs + "?stream=maybe", `{"text":"hi"}`, nil, 400, "stream", []string{"maybe"}},
		{"bad wait flag", "POST", msgs + "?wait=soon", `{"text":"hi"}`, nil, 400, "wait", []string{"soon"}},
		{"unknown agent", "POST", "/v1/agents/nobody/messages", `{"text":"hi"}`, nil, 404, "", []string{"nobody"}},
		{"unknown run", "GET", "/v1/runs/no-such-run", ``, nil, 404, "", []string{"no-such-run"}},
		{"input to unknown run", "POST", "/v1/runs/no-such-run/input", `{"text":"42"}`, nil, 404, "", []string{"no-such-run"}},
		{"input to finished run", "POST", "/v1/runs/" + done.ID + "/input", `{"text":"42"}`, nil, 409, "", []string{done.ID, "completed"}},
		{"cancel unknown run", "POST", "/v1/runs/no-such-run/cancel", ``, nil, 404, "", []string{"no-such-run"}},
		{"cancel finished run", "POST", "/v1/runs/" + done.ID + "/cancel", ``, nil, 409, "", []string{done.ID, "completed"}},
		{"events of unknown run", "GET", "/v1/runs/no-such-run/events", ``, nil, 404, "", []string{"no-such-run"}},
		{"Last-Event-ID beyond the end", "GET", "/v1/runs/" + done.ID + "/events", ``, []string{"Last-Event-ID", "999"}, 400, "Last-Event-ID", []string{"999", "beyond"}},
		{"non-numeric Last-Event-ID", "GET", "/v1/runs/" + done.ID + "/events", ``, []string{"Last-Event-ID", "abc"}, 400, "Last-Event-ID", []string{"abc"}},
		{"negative after", "GET", "/v1/runs/" + done.ID + "/events?after=-1", ``, nil, 400, "after", []string{"-1"}},
		{"after out of range", "GET", "/v1/runs/" + done.ID + "/events?after=99999999999999999999", ``, nil, 400, "after", []string{"99999999999999999999", "out of range"}},
		{"Last-Event-ID out of range", "GET", "/v1/runs/" + done.ID + "/events", ``, []string{"Last-Event-ID", "99999999999999999999"}, 400, "Last-Event-ID", []string{"out of range"}},
		{"garbage cursor", "GET", "/v1/runs?cursor=garbage", ``, nil, 400, "cursor", []string{`cursor: "garbage" is not a cursor this server issued`}},
		{"transcript after not a number", "GET", "/v1/contexts/" + done.ContextID + "/messages?after=x", ``, nil, 400, "after", []string{`"x"`}},
		{"transcript after negative", "GET", "/v1/contexts/" + done.ContextID + "/messages?after=-1", ``, nil, 400, "after", []string{"-1"}},
		{"transcript after out of range", "GET", "/v1/contexts/" + done.ContextID + "/messages?after=99999999999999999999", ``, nil, 400, "after", []string{"out of range"}},
		{"transcript limit too big", "GET", "/v1/contexts/" + done.ContextID + "/messages?limit=1001", ``, nil, 400, "limit", []string{"1001"}},
		{"bad status filter", "GET", "/v1/runs?status=done", ``, nil, 400, "status", []string{"done"}},
		{"bad status in a list", "GET", "/v1/runs?status=completed,nope", ``, nil, 400, "status", []string{"nope"}},
		{"limit zero", "GET", "/v1/runs?limit=0", ``, nil, 400, "limit", []string{"0"}},
		{"limit too big", "GET", "/v1/runs?limit=101", ``, nil, 400, "limit", []string{"101"}},
		{"limit not a number", "GET", "/v1/runs?limit=ten", ``, nil, 400, "limit", []string{"ten"}},
		{"unknown context", "GET", "/v1/contexts/no-such-context/messages", ``, nil, 404, "", []string{"no-such-context"}},
		{"unknown context, later page", "GET", "/v1/contexts/no-such-context/messages?after=1", ``, nil, 404, "", []string{"no-such-context"}},
		{"unknown run, escaped id", "GET", "/v1/runs/a%2Fb", ``, nil, 404, "", []string{`"a/b"`}},
		{"unknown route", "GET", "/v1/nothing/here", ``, nil, 404, "", []string{"/v1/nothing/here"}},
		{"wrong method", "DELETE", "/v1/runs", ``, nil, 405, "", []string{"DELETE"}},
		{"wrong method on a run", "PUT", "/v1/runs/" + done.ID, `{}`, nil, 405, "", []string{"PUT"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			p := problem(t, e.do(c.method, c.path, body, c.header...), c.status, c.field, c.mentions...)
			if strings.Contains(p.Detail, "list tasks") || strings.Contains(p.Detail, "store") {
				t.Errorf("detail %q shows the store's internals", p.Detail)
			}
		})
	}
	if after := e.total(); after != before {
		t.Errorf("bad requests left runs behind: total %d, was %d", after, before)
	}
	if n := len(e.run(done.ID).Messages); n != 2 {
		t.Errorf("bad requests changed the finished run's transcript: %d messages, want 2", n)
	}
}

// TestProblemTitles checks the titles of the statuses that have special
// ones.
func TestProblemTitles(t *testing.T) {
	e := newEnv(t, api.Options{MaxBodyBytes: 64})
	p := problem(t, e.do(http.MethodPost, "/v1/agents/echo/messages", `{"text":"`+strings.Repeat("y", 100)+`"}`), 413, "")
	if p.Title != "Request body too large" || p.Type != "urn:agentd:problem:payload_too_large" {
		t.Errorf("413 title %q, type %q", p.Title, p.Type)
	}
	p = problem(t, e.do(http.MethodGet, "/v1/runs/x", nil), 404, "")
	if p.Title != "Not found" || p.Instance != "/v1/runs/x" {
		t.Errorf("404 problem %+v", p)
	}
}

// A message part in a media type the agent does not take is refused up
// front (415, naming the part and the agent's modes); data and files it
// takes reach it.
func TestUnsupportedPartMediaType(t *testing.T) {
	e := newEnv(t, api.Options{})
	img := map[string]any{"message": map[string]any{"parts": []any{
		map[string]any{"type": "file", "media_type": "image/png", "file": map[string]any{"name": "a.png", "url": "https://example.com/a.png"}},
	}}}
	p := problem(t, e.do(http.MethodPost, "/v1/agents/echo/messages", img), http.StatusUnsupportedMediaType, "message.parts[0]", "image/png", "text/plain")
	if p.Type != "urn:agentd:problem:unsupported_media_type" {
		t.Errorf("problem type %q", p.Type)
	}
	data := map[string]any{"message": map[string]any{"parts": []any{map[string]any{"type": "data", "data": map[string]any{"a": 1}}}}}
	r := e.do(http.MethodPost, "/v1/agents/echo/messages", data)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"text":"{\"a\":1}"`) {
		t.Errorf("a data message to echo: %d %s, want its JSON echoed", r.status, r.body)
	}
}
