package main

import (
	"net/http"
	"strings"
	"testing"
)

// A workflow's inline agents are guarded like hosted loop agents: the
// graph agent's tool_settings make the step's calculator call wait for an
// approval, and its governance denies what its rules deny.
func TestWorkflowAgentsAreGuarded(t *testing.T) {
	yaml := `
providers:
  s:
    type: scripted
    rules:
      - {after_tool: calculator, reply: 'result {{.ToolResult}}'}
      - {match: '(?s)^Add', tool_calls: [{name: calculator, arguments: {expression: "2+2"}}]}
      - {match: '(?s)^Multiply', tool_calls: [{name: calculator, arguments: {expression: "3*3"}}]}
agents:
  - id: approving
    engine: graph
    provider: s
    tool_settings: {calculator: {approval: required}}
    workflow:
      name: approving
      agents: {adder: {description: Adds., tools: [calculator]}}
      steps: [{id: add, agent: adder, instructions: Add.}]
  - id: governed
    engine: graph
    provider: s
    governance: {mode: enforce, rules: [{name: no products, tool: calculator, when: 'args.expression.contains("*")', verdict: deny}]}
    workflow:
      name: governed
      agents: {multiplier: {description: Multiplies., tools: [calculator]}}
      steps: [{id: mul, agent: multiplier, instructions: Multiply.}]
`
	s := start(t, "--config", configFile(t, yaml))
	_, run := s.postJSONRun(t, "/v1/agents/approving/messages", `{"text": "go"}`)
	if run.Status != "input-required" || len(run.PendingApprovals) != 1 || run.PendingApprovals[0].Tool != "calculator" {
		t.Fatalf("run %s with approvals %+v, want the step's calculator call waiting", run.Status, run.PendingApprovals)
	}
	_, run = s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", `{"approvals":[{"call_id":"`+run.PendingApprovals[0].CallID+`","decision":"approve"}]}`)
	if run.Status != "completed" || !strings.Contains(run.lastText(), "result 4") {
		t.Fatalf("after the approval: %s %q", run.Status, run.lastText())
	}

	v := readJSON[approvalRun](t, s.post(t, "/v1/agents/governed/messages", `{"text": "go"}`), http.StatusOK)
	if v.Status != "completed" || !strings.Contains(v.lastText(), "denied by policy: no products") {
		t.Fatalf("governed run %s %q, want the call denied by the rule", v.Status, v.lastText())
	}
}
