package main

import (
	"net/http"
	"strings"
	"testing"
)

// scoutBudget is the demo configuration with the scout agent (a loop that
// asks the echo agent, an A2A peer, as the tool ask_echo) given budget
// (nil for none).
func scoutBudget(t *testing.T, budget map[string]any) string {
	return demoConfigWith(t, func(cfg map[string]any) {
		for _, a := range cfg["agents"].([]any) {
			if a := a.(map[string]any); a["id"] == "scout" && budget != nil {
				a["budget"] = budget
			}
		}
	})
}

// scoutRuns are the child runs of a scout run.
func scoutRuns(t *testing.T, s *server, parent string) []usageRun {
	t.Helper()
	page := readJSON[struct {
		Runs []usageRun `json:"runs"`
	}](t, s.get(t, "/v1/runs?agent_id=scout&limit=100"), http.StatusOK)
	var out []usageRun
	for _, r := range page.Runs {
		if r.Metadata["parent_run_id"] == parent {
			out = append(out, r)
		}
	}
	return out
}

// A loop agent whose peer call passes its share reads the failed tool
// call and answers without it: measured without a budget, the scout is
// then given exactly what it used, with a child_share so small that the
// peer call's share is less than the peer's tokens. The call's child run
// ends budget_exceeded; the scout's next turn reads the error and the run
// completes within its budget, its usage counting the peer's tokens.
func TestBudgetShareLoopGoesOn(t *testing.T) {
	ask := `{"text": "ask the peer ` + strings.Repeat("many words to repeat back ", 20) + `"}`
	free := start(t, "--config", scoutBudget(t, nil))
	whole := readJSON[usageRun](t, free.post(t, "/v1/agents/scout/messages", ask), http.StatusOK)
	calls := scoutRuns(t, free, whole.ID)
	if whole.Status != "completed" || len(calls) != 1 || calls[0].Usage.TotalTokens == 0 {
		t.Fatalf("without a budget: %+v, calls %+v", whole, calls)
	}
	peer, limit := calls[0].Usage.TotalTokens, whole.Usage.TotalTokens
	share := float64(peer-1) / float64(limit) // the call's share is less than this part of the budget

	capped := start(t, "--config", scoutBudget(t, map[string]any{"max_tokens_per_run": limit, "child_share": share}))
	type message struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}
	body := readJSON[struct {
		usageRun
		Messages []message `json:"messages"`
	}](t, capped.post(t, "/v1/agents/scout/messages", ask), http.StatusOK)
	if body.Status != "completed" {
		t.Fatalf("with a budget of %d and child_share %.3f: %+v %+v, want completed", limit, share, body.usageRun, body.Error)
	}
	last := body.Messages[len(body.Messages)-1]
	answer := ""
	for _, p := range last.Parts {
		answer += p.Text
	}
	if !strings.HasPrefix(answer, "The peer agent answered: ") || !strings.Contains(answer, "budget_exceeded") || !strings.Contains(answer, "over its share") {
		t.Errorf("the answer %q, want the scout's reply over the failed call", answer)
	}
	got := scoutRuns(t, capped, body.ID)
	if len(got) != 1 || got[0].Status != "failed" || got[0].Error == nil || got[0].Error.Class != "budget_exceeded" {
		t.Fatalf("the call's child run: %+v, want failed budget_exceeded", got)
	}
	if body.Usage.TotalTokens < peer || body.Usage.TotalTokens > limit {
		t.Errorf("the scout used %d tokens: want the peer's %d counted, within its budget of %d", body.Usage.TotalTokens, peer, limit)
	}
}
