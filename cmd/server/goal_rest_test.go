package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goalConfig has a goal agent, planner, whose scripted model first
// answers a workflow with a dangling dependency and, told so, corrects
// it (a goal starting "chain" is planned as four steps at once, the third
// slow); the plan's steps run on two loop agents of the file.
const goalConfig = `
server:
  lease_ttl: 2s
  default_agent: planner
providers:
  planner-script:
    type: scripted
    rules:
      - name: corrected
        prefix: The workflow is not valid
        split: none
        reply: |
          ` + "```yaml" + `
          name: report
          steps:
            - {id: research, agent: researcher, instructions: Find the facts.}
            - {id: write, agent: writer, instructions: Write it up., dependsOn: [research]}
          ` + "```" + `
      - name: a chain of four steps, the third slow
        prefix: chain
        split: none
        reply: |
          name: chain
          steps:
            - {id: s1, agent: researcher, instructions: Step one.}
            - {id: s2, agent: writer, instructions: Step two., dependsOn: [s1]}
            - {id: s3, agent: researcher, instructions: Slowly step three., dependsOn: [s2]}
            - {id: s4, agent: writer, instructions: Step four., dependsOn: [s3]}
      - name: first answer
        split: none
        reply: |
          name: report
          steps:
            - {id: research, agent: researcher, instructions: Find the facts.}
            - {id: write, agent: writer, instructions: Write it up., dependsOn: [reserch]}
  work-script:
    type: scripted
    rules:
      - name: slow step
        prefix: Slowly
        count: {number: '60', format: 'tok%d', separator: ' '}
        delay: 50ms
      - name: any step
        match: '(?s)^(\S+)'
        reply: 'done: {{index .Groups 1}}'
agents:
  - {id: researcher, description: Finds facts., engine: loop, provider: work-script, max_iterations: 1}
  - {id: writer, description: Writes text., engine: loop, provider: work-script, max_iterations: 1}
  - id: planner
    description: Plans and runs a goal.
    engine: goal
    provider: planner-script
    goal: {agents: [researcher, writer]}
`

// goalRun is a run as the REST face shows it, with its artifacts and
// pending approvals.
type goalRun struct {
	approvalRun
	StatusMessage *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"status_message"`
	Artifacts []struct {
		Name  string `json:"name"`
		Parts []struct {
			Type string          `json:"type"`
			Text string          `json:"text"`
			Data json.RawMessage `json:"data"`
		} `json:"parts"`
	} `json:"artifacts"`
}

func writeGoalConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, []byte(goalConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A goal run through the REST API: the corrected plan waits for approval
// (input-required, its pending call the workflow); an edit naming an
// agent the goal does not offer is asked about again; a valid edit runs,
// and the run's result artifact lists every step. The log shows the plan
// and the two planner calls. A rejected plan ends its run, rejected.
func TestGoalRunOverREST(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, writeGoalConfig(t), dsn)
		code, run := s.postJSONRun(t, "/v1/agents/planner/messages", `{"text":"write a report on tides"}`)
		if code != http.StatusOK || run.Status != "input-required" || len(run.PendingApprovals) != 1 ||
			run.PendingApprovals[0].CallID != "plan-1" || !strings.Contains(string(run.PendingApprovals[0].Arguments), `"dependsOn":["research"]`) {
			t.Fatalf("goal: %d %s, pending %+v; want the corrected plan waiting for approval", code, run.Status, run.PendingApprovals)
		}

		bad := `{"approvals":[{"call_id":"plan-1","decision":"edit","arguments":{"name":"report","steps":[{"id":"research","agent":"painter"}]}}]}`
		code, again := s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", bad)
		if code != http.StatusOK || again.Status != "input-required" || len(again.PendingApprovals) != 1 || again.PendingApprovals[0].CallID != "plan-2" {
			t.Fatalf("invalid edit: %d %s, pending %+v; want plan-2 asked", code, again.Status, again.PendingApprovals)
		}
		got := readJSON[goalRun](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
		if text := got.StatusMessage.Parts[0].Text; !strings.Contains(text, `unknown agent "painter"`) {
			t.Fatalf("second prompt does not name the problem:\n%s", text)
		}

		edit := `{"approvals":[{"call_id":"plan-2","decision":"edit","arguments":{"name":"report","steps":[` +
			`{"id":"research","agent":"researcher","instructions":"Find the facts."},` +
			`{"id":"write","agent":"writer","instructions":"Write it up.","dependsOn":["research"]},` +
			`{"id":"review","agent":"writer","instructions":"Review it.","dependsOn":["write"]}]}}]}`
		code, done := s.postJSONRun(t, "/v1/runs/"+run.ID+"/input", edit)
		if code != http.StatusOK || done.Status != "completed" {
			t.Fatalf("edited plan: %d %s %s", code, done.Status, done.Error)
		}
		final := readJSON[goalRun](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
		checkGoalResult(t, final, []string{"research", "write", "review"})
		if last := final.lastText(); last != "done: Review" {
			t.Errorf("answer %q, want the review step's", last)
		}

		// A rejected plan ends its run, rejected, saying so.
		_, second := s.postJSONRun(t, "/v1/agents/planner/messages", `{"text":"chain"}`)
		code, rejected := s.postJSONRun(t, "/v1/runs/"+second.ID+"/input", `{"approvals":[{"call_id":"plan-1","decision":"reject","reason":"too long"}]}`)
		if code != http.StatusOK || rejected.Status != "rejected" || !strings.Contains(string(rejected.Error), "the plan was rejected: too long") {
			t.Fatalf("rejected plan: %d %s %s", code, rejected.Status, rejected.Error)
		}

		var plans, planner int
		for _, ev := range runEvents(t, s, run.ID) {
			actor, _ := ev.data["actor"].(string)
			switch {
			case ev.typ == "plan":
				plans++
			case ev.typ == "step.complete" && strings.HasSuffix(actor, "_node_planner"):
				planner++
			}
		}
		if plans < 3 || planner != 2 {
			t.Errorf("%d plan events, %d planner steps; want ≥3 (proposed, edited, run) and 2", plans, planner)
		}
	})
}

// checkGoalResult: the run's result artifact lists every step, completed.
func checkGoalResult(t *testing.T, run goalRun, steps []string) {
	t.Helper()
	for _, a := range run.Artifacts {
		if a.Name != "result" {
			continue
		}
		var res struct {
			Steps []struct{ ID, Status string }
		}
		for _, p := range a.Parts {
			if p.Type == "data" {
				_ = json.Unmarshal(p.Data, &res)
			}
		}
		if len(res.Steps) != len(steps) {
			t.Fatalf("result lists %+v, want %v", res.Steps, steps)
		}
		for i, s := range res.Steps {
			if s.ID != steps[i] || s.Status != "completed" {
				t.Errorf("result step %d: %+v, want %s completed", i, s, steps[i])
			}
		}
		return
	}
	t.Fatalf("no result artifact among %d", len(run.Artifacts))
}
