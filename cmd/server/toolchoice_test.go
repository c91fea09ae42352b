package main

import (
	"net/http"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/llm/openai/openaitest"
)

// A request's tool_choice reaches the model: the REST body's tool_choice
// field and an A2A message's metadata tool_choice, both on the wire of a
// fake OpenAI-compatible endpoint; the agent's own (none) applies
// otherwise.
func TestToolChoicePerRequest(t *testing.T) {
	srv := openaitest.New(openaitest.Text("fine"))
	t.Cleanup(srv.Close)
	yaml := `
providers:
  o: {type: openai, base_url: "` + srv.BaseURL() + `", model: fake-model, max_retries: -1}
agents:
  - {id: chooser, engine: loop, provider: o, tools: [calculator, clock], tool_choice: none}
`
	s := start(t, "--config", configFile(t, yaml))
	readJSON[runJSON](t, s.post(t, "/v1/agents/chooser/messages", `{"text": "hi"}`), http.StatusOK)
	readJSON[runJSON](t, s.post(t, "/v1/agents/chooser/messages", `{"text": "hi", "tool_choice": "required"}`), http.StatusOK)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("what time is it"))
	msg.Metadata = map[string]any{"tool_choice": "clock"}
	if u := collectA2A(t, s.fedClient(t, "chooser", a2a.TransportProtocolJSONRPC, "/jsonrpc"), msg); u.state != a2a.TaskStateCompleted {
		t.Fatalf("A2A task %s", u.state)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	named, _ := reqs[2]["tool_choice"].(map[string]any)
	fn, _ := named["function"].(map[string]any)
	if reqs[0]["tool_choice"] != "none" || reqs[1]["tool_choice"] != "required" || fn["name"] != "clock" {
		t.Fatalf("tool_choice sent: %v, %v, %v; want none (the agent's), required (REST), clock (A2A)",
			reqs[0]["tool_choice"], reqs[1]["tool_choice"], reqs[2]["tool_choice"])
	}
}
