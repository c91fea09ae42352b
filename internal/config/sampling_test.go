package config

import (
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/llm/openai/openaitest"
	"agentd/internal/model"
)

// Every sampling setting reaches the provider, from a loop agent and from
// a workflow's agent, and tool_choice and the response schema too.
func TestSamplingReachesProvider(t *testing.T) {
	srv := openaitest.New(openaitest.Text(`{"ok": true}`))
	t.Cleanup(srv.Close)
	yaml := `
providers:
  o: {type: openai, base_url: "` + srv.BaseURL() + `", model: fake-model, max_retries: -1}
agents:
  - id: tuned
    engine: loop
    provider: o
    tools: [calculator]
    temperature: 0.3
    top_p: 0.9
    max_tokens: 123
    tool_choice: none
    response_schema: {type: object}
  - id: flowing
    engine: graph
    provider: o
    workflow:
      name: w
      agents:
        writer: {description: Writes., temperature: 0.4, topP: 0.8}
      steps: [{id: s1, agent: writer, instructions: Write.}]
`
	c, err := Parse([]byte(yaml), "agentd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		b := engine.NewBoard()
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "go"))
		if _, err := a.Engine.Execute(t.Context(), engine.Run{ID: "r-" + a.ID}, enginetest.NewRecordingHost(), b); err != nil {
			t.Fatalf("%s: %v", a.ID, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	loop, step := reqs[0], reqs[1]
	for k, want := range map[string]any{"temperature": 0.3, "top_p": 0.9, "max_tokens": 123.0, "tool_choice": "none"} {
		if loop[k] != want {
			t.Errorf("loop agent's %s: %v, want %v", k, loop[k], want)
		}
	}
	if _, ok := loop["response_format"]; !ok {
		t.Error("the loop agent's response schema was not sent")
	}
	for k, want := range map[string]any{"temperature": 0.4, "top_p": 0.8} {
		if step[k] != want {
			t.Errorf("workflow agent's %s: %v, want %v", k, step[k], want)
		}
	}
}

// A loop agent without a timeout gets DefaultLoopTimeout; one with its
// own keeps it; other engines get none.
func TestDefaultLoopTimeout(t *testing.T) {
	for _, c := range []struct {
		a    Agent
		want time.Duration
	}{
		{Agent{Engine: "loop"}, DefaultLoopTimeout},
		{Agent{Engine: "loop", Timeout: Duration(time.Minute)}, time.Minute},
		{Agent{Engine: "graph"}, 0},
	} {
		if got := runtimeAgent(c.a, nil).Timeout; got != c.want {
			t.Errorf("%+v: timeout %v, want %v", c.a, got, c.want)
		}
	}
}
