package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// threeStepsPriced is threeSteps on a priced model: a token costs 1, so
// a run's cost is its token count.
func threeStepsPriced(t *testing.T, budget string) string {
	t.Helper()
	return threeStepsOn(t, "prices:\n  mini: {input_per_million: 1000000, output_per_million: 1000000}", "    model: mini\n", budget)
}

// A cost budget (budget.max_cost_per_run) covers a workflow's whole call
// tree as the token budget does: given less than the three steps cost,
// steps 1 and 2 complete, step 3's run — whose model turn passes it —
// ends budget_exceeded (its share, what steps 1 and 2 left, is spent), and
// the workflow's run fails, naming it.
// A cost budget without prices is refused at load.
func TestCostBudgetOverWorkflowTree(t *testing.T) {
	free := start(t, "--config", threeStepsPriced(t, ""))
	whole := readJSON[usageRun](t, free.post(t, "/v1/agents/three/messages", `{"text": "go"}`), http.StatusOK)
	children := steps(t, free, whole.ID)
	if whole.Status != "completed" || len(children) != 3 {
		t.Fatalf("without a budget: %+v, %d steps", whole, len(children))
	}
	limit := whole.Usage.TotalTokens - children["s3"].Usage.TotalTokens/2 // a token costs 1

	capped := start(t, "--config", threeStepsPriced(t, fmt.Sprintf("    budget: {max_cost_per_run: %d}", limit)))
	v := readJSON[usageRun](t, capped.post(t, "/v1/agents/three/messages", `{"text": "go"}`), http.StatusOK)
	if v.Status != "failed" || v.Error == nil || !strings.Contains(v.Error.Message, "s3") || !strings.Contains(v.Error.Message, "cost budget") {
		t.Fatalf("with a cost budget of %d: %+v %+v, want failed, naming step s3's spent share of the cost budget", limit, v, v.Error)
	}
	got := steps(t, capped, v.ID)
	for step, want := range map[string]string{"s1": "completed", "s2": "completed", "s3": "failed"} {
		if got[step].Status != want {
			t.Errorf("step %s: %s, want %s", step, got[step].Status, want)
		}
	}

	unpriced := threeSteps(t, "    budget: {max_cost_per_run: 1}")
	var stderr strings.Builder
	err := run(t.Context(), []string{"--config", unpriced, "--addr", "127.0.0.1:0"}, noEnv, &stderr, nil)
	if err == nil || !strings.Contains(err.Error(), "agents[0].budget.max_cost_per_run: a cost budget needs prices") {
		t.Fatalf("a cost budget without prices: %v, want it refused naming the field", err)
	}
}
