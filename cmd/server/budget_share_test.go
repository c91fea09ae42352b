package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A step that passes its share of the workflow's budget fails alone, and
// the workflow's failure strategy decides: measured without a budget, the
// workflow is given less than its three steps need, so step 3's share —
// what steps 1 and 2 left — is too small. Under skip-dependents the
// workflow goes on without step 3 and completes; under cascade it fails,
// saying which step ended budget_exceeded. Either way the step's own run
// ends budget_exceeded, naming its share, and the workflow's usage counts
// every token its steps used.
func TestBudgetShareParentDecides(t *testing.T) {
	free := start(t, "--config", threeSteps(t, ""))
	whole := readJSON[usageRun](t, free.post(t, "/v1/agents/three/messages", `{"text": "go"}`), http.StatusOK)
	children := steps(t, free, whole.ID)
	if whole.Status != "completed" || len(children) != 3 {
		t.Fatalf("without a budget: %+v, %d steps", whole, len(children))
	}
	limit := whole.Usage.TotalTokens - children["s3"].Usage.TotalTokens/2
	budget := fmt.Sprintf("    budget: {max_tokens_per_run: %d}", limit)

	for _, c := range []struct {
		strategy, status string
	}{
		{"skip-dependents", "completed"},
		{"cascade", "failed"},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			s := start(t, "--config", configFile(t, threeStepsYAML("", "", budget, "      options: {onStepFailure: "+c.strategy+"}")))
			v := readJSON[usageRun](t, s.post(t, "/v1/agents/three/messages", `{"text": "go"}`), http.StatusOK)
			if v.Status != c.status {
				t.Fatalf("with a budget of %d tokens under %s: %+v, want %s", limit, c.strategy, v, c.status)
			}
			got := steps(t, s, v.ID)
			for step, want := range map[string]string{"s1": "completed", "s2": "completed", "s3": "failed"} {
				if got[step].Status != want {
					t.Errorf("step %s: %s, want %s", step, got[step].Status, want)
				}
			}
			share := limit - got["s1"].Usage.TotalTokens - got["s2"].Usage.TotalTokens
			e := got["s3"].Error
			if e == nil || e.Class != "budget_exceeded" || !strings.Contains(e.Message, fmt.Sprintf("over its share of %d of run %s's budget", share, v.ID)) {
				t.Errorf("step s3's error %+v, want budget_exceeded naming its share of %d", e, share)
			}
			if sum := got["s1"].Usage.TotalTokens + got["s2"].Usage.TotalTokens + got["s3"].Usage.TotalTokens; v.Usage.TotalTokens != sum || sum <= limit {
				t.Errorf("the workflow's run used %d tokens, its steps %d (budget %d): a failed step's tokens are its parent's too", v.Usage.TotalTokens, sum, limit)
			}
			if c.status == "failed" && (v.Error == nil || !strings.Contains(v.Error.Message, "s3") || !strings.Contains(v.Error.Message, "budget_exceeded")) {
				t.Errorf("the cascade's error %+v, want it to name step s3 and budget_exceeded", v.Error)
			}
		})
	}
}
