package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// A budget per agent per period, through the HTTP API of real servers, on
// memstore and on PostgreSQL: a loop agent on the scripted model that calls
// the calculator on every turn is stopped mid-tool-loop once the period's
// tokens are spent (run.end last), and its next run is refused before it
// starts — on PostgreSQL by a second server sharing the database, which
// sees the same counter.

const budgetConfig = `
providers:
  looper:
    type: scripted
    rules:
      - name: again
        after_tool: calculator
        tool_calls: [{name: calculator, arguments: '{"expression": "1+1"}'}]
      - name: start
        match: '(?i)^loop$'
        tool_calls: [{name: calculator, arguments: '{"expression": "1+1"}'}]
      - name: greet
        reply: hello there
agents:
  - id: metered
    engine: loop
    provider: looper
    tools: [calculator]
    max_iterations: 100
    budget: {period: 24h, max_tokens_per_period: 150}
`

// runError is a failed run's error.
type runError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

func (r approvalRun) runError(t *testing.T) runError {
	t.Helper()
	var e runError
	if len(r.Error) > 0 {
		if err := json.Unmarshal(r.Error, &e); err != nil {
			t.Fatalf("error %s: %v", r.Error, err)
		}
	}
	return e
}

func TestBudgetPerPeriodOverREST(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		cfg := writeYAML(t, budgetConfig)
		a := startStore(t, cfg, dsn)
		_, run := a.postJSONRun(t, "/v1/agents/metered/messages", `{"text":"loop"}`)
		if e := run.runError(t); run.Status != "failed" || e.Class != "budget_exceeded" || !strings.Contains(e.Message, "max_tokens_per_period of 150") {
			t.Fatalf("looping run: %s %+v; want failed, budget_exceeded naming max_tokens_per_period", run.Status, e)
		}
		evs := readUntilEnd(t, bufio.NewReader(a.get(t, "/v1/runs/"+run.ID+"/events").Body))
		if calls := toolSteps(evs); calls < 2 {
			t.Fatalf("the run made %d tool calls before its budget stopped it; want a tool loop (at least 2)", calls)
		}
		if last := evs[len(evs)-1]; last.typ != "run.end" || last.data["state"] != "failed" {
			t.Fatalf("last event %s %v, want run.end failed", last.typ, last.data)
		}
		checkSeqs(t, evs)

		// The next run is refused before it starts, here and — on
		// PostgreSQL — on a second server sharing the counter.
		servers := []*server{a}
		if dsn != "" {
			servers = append(servers, startStore(t, cfg, dsn))
		}
		for i, s := range servers {
			_, run := s.postJSONRun(t, "/v1/agents/metered/messages", `{"text":"hi"}`)
			if e := run.runError(t); run.Status != "failed" || e.Class != "budget_exceeded" || !strings.Contains(e.Message, "its whole budget max_tokens_per_period of 150") {
				t.Fatalf("server %d: a run after the budget was spent: %s %+v; want failed before it started", i+1, run.Status, e)
			}
			if got := readJSON[runJSON](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK); len(got.Messages) != 1 {
				t.Fatalf("server %d: the refused run has %d messages, want the user's alone", i+1, len(got.Messages))
			}
		}
	})
}

// toolSteps counts the tool steps a run's events started.
func toolSteps(evs []event) int {
	n := 0
	for _, ev := range evs {
		if p, _ := ev.data["payload"].(map[string]any); ev.typ == "step.start" && p["kind"] == "tool" {
			n++
		}
	}
	return n
}

// Over A2A the spent budget fails the task, its status message naming the
// budget: the looping task mid-tool-loop, the next one before it starts —
// on PostgreSQL on a second server sharing the counter.
func TestBudgetPerPeriodOverA2A(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		cfg := writeYAML(t, budgetConfig)
		a := startStore(t, cfg, dsn)
		task := sendA2A(t, agentA2A(t, a, "metered"), "loop")
		if task.Status.State != a2a.TaskStateFailed || !strings.Contains(statusText(task), "over its budget max_tokens_per_period of 150") {
			t.Fatalf("looping task: %s %q; want failed naming max_tokens_per_period", task.Status.State, statusText(task))
		}
		evs := readUntilEnd(t, bufio.NewReader(a.get(t, "/v1/runs/"+string(task.ID)+"/events").Body))
		if calls := toolSteps(evs); calls < 2 {
			t.Fatalf("the task made %d tool calls before its budget stopped it; want a tool loop (at least 2)", calls)
		}
		servers := []*server{a}
		if dsn != "" {
			servers = append(servers, startStore(t, cfg, dsn))
		}
		for i, s := range servers {
			task := sendA2A(t, agentA2A(t, s, "metered"), "hi")
			if task.Status.State != a2a.TaskStateFailed || !strings.Contains(statusText(task), "its whole budget max_tokens_per_period of 150") {
				t.Fatalf("server %d: a task after the budget was spent: %s %q; want failed before it started", i+1, task.Status.State, statusText(task))
			}
			if len(task.History) != 1 || task.History[0].Role != a2a.MessageRoleUser {
				t.Fatalf("server %d: the refused task's history %v, want the user's message alone", i+1, task.History)
			}
		}
	})
}

// sendA2A sends text in a new task and returns the task answered.
func sendA2A(t *testing.T, c *a2aclient.Client, text string) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
	if err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("send %q: %#v, want a task", text, res)
	}
	return task
}

// statusText is the text of a task's status message.
func statusText(task *a2a.Task) string {
	if task.Status.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range task.Status.Message.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}
