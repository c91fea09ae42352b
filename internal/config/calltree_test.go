package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentd/internal/errdefs"
)

// pingPong is the configuration of the 802-run report: two workflows
// whose step runs the other one.
func pingPong(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pingpong.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Workflows that run each other, hand-offs and peer tools that come back
// are refused at load with the cycle named; a chain without a cycle loads.
func TestCallCyclesRefused(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"workflows", pingPong(t), "call cycle ping → pong (workflow step agent:pong) → ping (workflow step agent:ping)"},
		{"hand-offs", `
providers: {s: {type: scripted, rules: [{match: ".*", reply: "ok"}]}}
agents:
  - {id: a, engine: loop, provider: s, handoffs: [b]}
  - {id: b, engine: loop, provider: s, peer_tools: [{name: ask_a, card: /agents/a/.well-known/agent-card.json}]}
`, "call cycle a → b (hand-off to b) → a (peer tool ask_a)"},
		{"a goal's plans", `
providers: {s: {type: scripted, rules: [{match: ".*", reply: "ok"}]}}
agents:
  - {id: g, engine: goal, provider: s, goal: {agents: [a]}}
  - {id: a, engine: loop, provider: s, handoffs: [g]}
`, "call cycle g → a (goal plan step agent:a) → g (hand-off to g)"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yaml), "agentd.yaml")
		if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a validation error naming %q", c.name, err, c.want)
		}
	}
	chain := strings.Replace(pingPong(t), `model: "agent:ping"`, `model: "s"`, 1)
	if _, err := Parse([]byte(chain), "agentd.yaml"); err != nil {
		t.Errorf("a chain without a cycle: %v", err)
	}
	if _, err := Load(""); err != nil {
		t.Errorf("the demo configuration: %v", err)
	}
}

// A workflow agent listing a tool the server will not have is refused at
// load, naming it; one listing a peer tool another agent declares loads.
func TestWorkflowToolsChecked(t *testing.T) {
	base := `
providers: {s: {type: scripted, rules: [{match: ".*", reply: "ok"}]}}
agents:
  - {id: a, engine: loop, provider: s, peer_tools: [{name: ask_b, card: "http://127.0.0.1:1/agents/b/.well-known/agent-card.json"}]}
  - id: w
    engine: graph
    provider: s
    workflow: {name: w, agents: {x: {description: X., tools: [TOOL]}}, steps: [{id: s1, agent: x}]}
`
	_, err := Parse([]byte(strings.Replace(base, "TOOL", "clok", 1)), "agentd.yaml")
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), `agents[1] (w).workflow.agents.x.tools[0]: unknown tool "clok"`) {
		t.Fatalf("an unknown tool: %v", err)
	}
	if _, err := Parse([]byte(strings.Replace(base, "TOOL", "ask_b", 1)), "agentd.yaml"); err != nil {
		t.Fatalf("a declared peer tool: %v", err)
	}
}
