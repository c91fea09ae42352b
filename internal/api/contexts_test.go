package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"agentd/internal/api"
)

// TestListContexts pages through conversations newest first: each once,
// at the place of its newest run, with its title and number of runs, and
// filtered by agent.
func TestListContexts(t *testing.T) {
	e := newEnv(t, api.Options{})
	// Five conversations with the echo agent; the second gets two more
	// runs last, so it is the newest; one with the assistant.
	var ctxs []string
	for i := range 5 {
		v := e.send("echo", "", map[string]any{"text": fmt.Sprintf("hello number %d", i)})
		ctxs = append(ctxs, v.ContextID)
	}
	asst := e.send("assistant", "", map[string]any{"text": "what time is it?"})
	for range 2 {
		e.send("echo", "", map[string]any{"text": "again", "context_id": ctxs[1]})
	}

	var got []api.ContextView
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("the listing does not end")
		}
		l := decode[api.ContextList](t, e.do(http.MethodGet, "/v1/contexts?limit=2&cursor="+cursor, nil), http.StatusOK)
		if len(l.Contexts) > 2 {
			t.Fatalf("page of %d contexts, limit 2", len(l.Contexts))
		}
		got = append(got, l.Contexts...)
		if cursor = l.NextCursor; cursor == "" {
			break
		}
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	want := []string{ctxs[1], asst.ContextID, ctxs[4], ctxs[3], ctxs[2], ctxs[0]}
	if !slices.Equal(ids, want) {
		t.Fatalf("contexts = %v, want %v", ids, want)
	}
	first := got[0]
	if first.Runs != 3 || first.Title != "hello number 1" || first.AgentID != "echo" || first.LastRun.Status != "completed" {
		t.Errorf("newest context = %+v, want 3 runs of echo titled %q", first, "hello number 1")
	}
	if got[1].AgentID != "assistant" || got[1].Runs != 1 || got[1].LastRun.ID != asst.ID {
		t.Errorf("assistant's context = %+v", got[1])
	}

	only := decode[api.ContextList](t, e.do(http.MethodGet, "/v1/contexts?agent=assistant", nil), http.StatusOK)
	if len(only.Contexts) != 1 || only.Contexts[0].ID != asst.ContextID || only.NextCursor != "" {
		t.Errorf("agent=assistant: %+v, want its one conversation", only)
	}
}

// TestListContextsRefuses names the parameter at fault.
func TestListContextsRefuses(t *testing.T) {
	e := newEnv(t, api.Options{})
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "cursor=not-a-cursor"} {
		r := e.do(http.MethodGet, "/v1/contexts?"+q, nil)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: %s, want 400", q, r)
		}
	}
	empty := decode[api.ContextList](t, e.do(http.MethodGet, "/v1/contexts", nil), http.StatusOK)
	if empty.Contexts == nil || len(empty.Contexts) != 0 {
		t.Errorf("no conversations: %+v, want an empty list", empty)
	}
}

// TestServerInfo answers what the server is.
func TestServerInfo(t *testing.T) {
	e := newEnv(t, api.Options{Store: "postgres"})
	v := decode[api.ServerView](t, e.do(http.MethodGet, "/v1/server", nil), http.StatusOK)
	if v.Store != "postgres" || !v.Ready || v.Agents < 5 || v.GoVersion == "" || v.Links["openapi"] != "/openapi.yaml" || v.StartedAt.IsZero() {
		t.Errorf("server = %+v", v)
	}
	agents := decode[api.AgentList](t, e.do(http.MethodGet, "/v1/agents", nil), http.StatusOK)
	engines := map[string]string{}
	for _, a := range agents.Agents {
		engines[a.ID] = a.Engine
	}
	if engines["echo"] != "loop" || engines["research"] != "graph" || engines["refund"] != "flow" {
		t.Errorf("engines = %v", engines)
	}
}
