package main

import (
	"testing"

	"agentd/internal/llm/openai/openaitest"
)

// A run's config.configurable.tool_choice, or its context.tool_choice,
// reaches the model as the request's tool choice (the body
// @langchain/langgraph-sdk sends for runs.wait with config or context);
// the agent's own (none) applies otherwise.
func TestAgentProtoToolChoice(t *testing.T) {
	srv := openaitest.New(openaitest.Text("fine"))
	t.Cleanup(srv.Close)
	yaml := `
providers:
  o: {type: openai, base_url: "` + srv.BaseURL() + `", model: fake-model, max_retries: -1}
agents:
  - {id: chooser, engine: loop, provider: o, tools: [calculator, clock], tool_choice: none}
`
	s := start(t, "--config", configFile(t, yaml))
	for _, body := range []string{
		`{"assistant_id":"chooser","input":{"messages":[{"role":"user","content":"hi"}]}}`,
		`{"assistant_id":"chooser","input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"tool_choice":"required"}}}`,
		`{"assistant_id":"chooser","input":{"messages":[{"role":"user","content":"hi"}]},"context":{"tool_choice":"clock"}}`,
	} {
		if r := s.call(t, "", "POST", "/lg/runs/wait", body); r.status != 200 {
			t.Fatalf("runs/wait %s: %d %s", body, r.status, r.body)
		}
	}
	if r := s.call(t, "", "POST", "/lg/runs/wait", `{"assistant_id":"chooser","input":{"messages":[{"role":"user","content":"hi"}]},"context":{"tool_choice":["clock"]}}`); r.status != 422 {
		t.Fatalf("a list as tool_choice: %d %s, want 422", r.status, r.body)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	named, _ := reqs[2]["tool_choice"].(map[string]any)
	fn, _ := named["function"].(map[string]any)
	if reqs[0]["tool_choice"] != "none" || reqs[1]["tool_choice"] != "required" || fn["name"] != "clock" {
		t.Fatalf("tool_choice sent: %v, %v, %v; want none (the agent's), required (configurable), clock (context)",
			reqs[0]["tool_choice"], reqs[1]["tool_choice"], reqs[2]["tool_choice"])
	}
}
