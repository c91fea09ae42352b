package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// Structured output through the HTTP API, on memstore and on PostgreSQL:
// an agent with a response schema whose model first answers wrongly, then
// rightly, completes with the JSON as a data part and a "result" artifact
// (REST and a2a-go's client); one whose model never matches fails with
// class model_output, naming the problem.

const structuredConfig = `
providers:
  pointer:
    type: scripted
    rules:
      - name: corrected
        prefix: Your answer does not match
        reply: '{"width": 3, "height": 4}'
      - name: first try
        reply: '{"width": "three"}'
  stubborn:
    type: scripted
    rules: [{reply: 'a point, probably'}]
agents:
  - id: point
    engine: loop
    provider: pointer
    response_schema:
      type: object
      required: [width, height]
      additionalProperties: false
      properties:
        width: {type: integer}
        height: {type: integer}
    response_retries: 1
  - id: stubborn
    engine: loop
    provider: stubborn
    response_schema: {type: object}
    response_retries: 1
`

// structuredRun is a run with its artifacts and data parts.
type structuredRun struct {
	approvalRun
	Artifacts []struct {
		Name  string `json:"name"`
		Parts []struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"parts"`
	} `json:"artifacts"`
}

func TestStructuredOutputOverREST(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, writeYAML(t, structuredConfig), dsn)
		_, run := s.postJSONRun(t, "/v1/agents/point/messages", `{"text":"give me a point"}`)
		got := readJSON[structuredRun](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
		if got.Status != "completed" || len(got.Artifacts) != 1 || got.Artifacts[0].Name != "result" ||
			string(got.Artifacts[0].Parts[0].Data) != `{"width":3,"height":4}` {
			t.Fatalf("run %s, artifacts %+v; want completed with the result artifact {\"width\":3,\"height\":4}", got.Status, got.Artifacts)
		}
		last := got.Messages[len(got.Messages)-1]
		if last.Role != "assistant" || len(last.Parts) != 1 || last.Parts[0].Type != "data" {
			t.Fatalf("final message %+v, want the assistant's data part", last)
		}
		evs := readUntilEnd(t, bufio.NewReader(s.get(t, "/v1/runs/"+run.ID+"/events").Body))
		if len(ofType(evs, "artifact")) != 1 {
			t.Fatalf("%d artifact events, want the result's", len(ofType(evs, "artifact")))
		}

		_, run = s.postJSONRun(t, "/v1/agents/stubborn/messages", `{"text":"give me a point"}`)
		if e := run.runError(t); run.Status != "failed" || e.Class != "model_output" || !strings.Contains(e.Message, "did not match the response schema after 2 tries") {
			t.Fatalf("a model that never matches: %s %+v; want failed, class model_output", run.Status, e)
		}
	})
}

func TestStructuredOutputOverA2A(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, writeYAML(t, structuredConfig), dsn)
		res, err := agentA2A(t, s, "point").SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("give me a point"))})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("A2A answer %#v, want a completed task", res)
		}
		var result *a2a.Artifact
		for _, a := range task.Artifacts {
			if a.Name == "result" {
				result = a
			}
		}
		want := map[string]any{"width": float64(3), "height": float64(4)}
		if result == nil || len(result.Parts) != 1 {
			t.Fatalf("artifacts %v: want one named result with one part", task.Artifacts)
		}
		if d, ok := result.Parts[0].Data().(map[string]any); !ok || d["width"] != want["width"] || d["height"] != want["height"] || len(d) != 2 {
			t.Fatalf("result artifact part %#v, want the data %v", result.Parts[0], want)
		}
		last := task.History[len(task.History)-1]
		if d, ok := last.Parts[0].Data().(map[string]any); last.Role != a2a.MessageRoleAgent || !ok || d["width"] != want["width"] {
			t.Fatalf("the agent's last message %#v, want the data part", last)
		}

		res, err = agentA2A(t, s, "stubborn").SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("give me a point"))})
		if err != nil {
			t.Fatal(err)
		}
		task = res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].Text(), "did not match the response schema") {
			t.Fatalf("a model that never matches over A2A: %s %#v; want failed naming the schema", task.Status.State, task.Status.Message)
		}
	})
}

// agentA2A is an a2a-go JSON-RPC client of agent id on s.
func agentA2A(t *testing.T, s *server, id string) *a2aclient.Client {
	t.Helper()
	iface := &a2a.AgentInterface{URL: s.base + "/agents/" + id + "/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{iface})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}
