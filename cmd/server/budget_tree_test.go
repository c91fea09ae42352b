package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// threeSteps is a workflow of three steps on the scripted model; budget is
// the workflow agent's budget block ("" for none).
func threeSteps(t *testing.T, budget string) string { return threeStepsOn(t, "", "", budget) }

// threeStepsOn is threeSteps with top-level YAML before the providers
// (prices) and the scripted provider's model line ("" for none).
func threeStepsOn(t *testing.T, top, model, budget string) string {
	t.Helper()
	return configFile(t, threeStepsYAML(top, model, budget, ""))
}

// threeStepsYAML is threeStepsOn's configuration, with the workflow's
// options ("" for none: the failure strategy is cascade).
func threeStepsYAML(top, model, budget, options string) string {
	return top + `
providers:
  s:
    type: scripted
` + model + `    rules:
      - {match: '(?s)^Step (\d)\.', reply: 'step {{index .Groups 1}} is done, with a few words more to count'}
agents:
  - id: three
    engine: graph
    provider: s
` + budget + `
    workflow:
      name: three
` + options + `
      agents:
        worker: {description: Does one step.}
      steps:
        - {id: s1, agent: worker, instructions: Step 1.}
        - {id: s2, agent: worker, instructions: Step 2., dependsOn: [s1]}
        - {id: s3, agent: worker, instructions: Step 3., dependsOn: [s2]}
`
}

type usageRun struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Usage  struct {
		TotalTokens int64 `json:"total_tokens"`
	} `json:"usage"`
	Error    *runError      `json:"error"`
	Metadata map[string]any `json:"metadata"`
}

// steps are the child runs of a workflow run, by step.
func steps(t *testing.T, s *server, parent string) map[string]usageRun {
	t.Helper()
	page := readJSON[struct {
		Runs []usageRun `json:"runs"`
	}](t, s.get(t, "/v1/runs?agent_id=three&limit=100"), http.StatusOK)
	out := map[string]usageRun{}
	for _, r := range page.Runs {
		if r.Metadata["parent_run_id"] == parent {
			out[fmt.Sprint(r.Metadata["parent_step"])] = r
		}
	}
	return out
}

// A token budget over a workflow of three steps covers its whole call
// tree: measured without a budget, the workflow is then given less than
// it needs; steps 1 and 2 complete, step 3's run — whose model turn passes
// its share, what steps 1 and 2 left — ends budget_exceeded, and the
// workflow's run (cascade, the default) fails, saying so.
func TestBudgetOverWorkflowTree(t *testing.T) {
	free := start(t, "--config", threeSteps(t, ""))
	whole := readJSON[usageRun](t, free.post(t, "/v1/agents/three/messages", `{"text": "go"}`), http.StatusOK)
	if whole.Status != "completed" {
		t.Fatalf("without a budget: %+v", whole)
	}
	children := steps(t, free, whole.ID)
	if len(children) != 3 {
		t.Fatalf("%d step runs, want 3", len(children))
	}
	var sum int64
	for _, c := range children {
		sum += c.Usage.TotalTokens
	}
	if sum != whole.Usage.TotalTokens || sum == 0 {
		t.Fatalf("the steps used %d tokens, the workflow's run says %d: the tree's usage must roll up", sum, whole.Usage.TotalTokens)
	}
	limit := whole.Usage.TotalTokens - children["s3"].Usage.TotalTokens/2

	capped := start(t, "--config", threeSteps(t, fmt.Sprintf("    budget: {max_tokens_per_run: %d}", limit)))
	v := readJSON[usageRun](t, capped.post(t, "/v1/agents/three/messages", `{"text": "go"}`), http.StatusOK)
	if v.Status != "failed" || v.Error == nil || !strings.Contains(v.Error.Message, "s3") || !strings.Contains(v.Error.Message, "budget_exceeded: child run") {
		t.Fatalf("with a budget of %d tokens: %+v %+v, want failed, naming step s3's spent share", limit, v, v.Error)
	}
	got := steps(t, capped, v.ID)
	for step, want := range map[string]string{"s1": "completed", "s2": "completed", "s3": "failed"} {
		if got[step].Status != want {
			t.Errorf("step %s: %s, want %s", step, got[step].Status, want)
		}
	}
	if e := got["s3"].Error; e == nil || e.Class != "budget_exceeded" {
		t.Errorf("step s3's error %+v, want budget_exceeded", e)
	}
}
