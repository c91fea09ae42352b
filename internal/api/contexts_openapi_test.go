package api

import (
	"encoding/json"
	"testing"
	"time"

	runv "agentd/internal/run"
)

// TestOpenAPIDescribesContextsAndServer validates what GET /v1/contexts
// and GET /v1/server encode against their schemas.
func TestOpenAPIDescribesContextsAndServer(t *testing.T) {
	schemas := newSchemaSet(t, loadSpec(t))
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	run := viewOf(runv.Task{ID: "r1", ContextID: "c1", AgentID: "echo", State: runv.StateCompleted, Attempt: 1, CreatedAt: at, UpdatedAt: at})
	cases := []struct {
		schema string
		value  any
	}{
		{"ContextList", ContextList{Contexts: []ContextView{{ID: "c1", AgentID: "echo", Title: "hi", Runs: 2, LastRun: run, UpdatedAt: at}}, NextCursor: "x"}},
		{"ContextList", ContextList{Contexts: []ContextView{}}},
		{"ServerView", ServerView{Version: "(devel)", GoVersion: "go1.25", Store: "memory", Ready: true, Agents: 3,
			Links: map[string]string{"openapi": "/openapi.yaml"}, StartedAt: at}},
		{"ServerView", ServerView{Version: "v1.2.0", Revision: "abc", GoVersion: "go1.25", Store: "postgres", Reason: "the store is not reachable",
			Links: map[string]string{}, StartedAt: at}},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.value)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas.validate(component(c.schema), b); err != nil {
			t.Errorf("%s does not describe %s: %v", c.schema, b, err)
		}
	}
}
