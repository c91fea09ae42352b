package main

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The revise loop from configuration, through the HTTP API (REST and
// a2a-go's client), on memstore and on PostgreSQL:
// a judge model (scripted) rejects the first answer with feedback, the
// agent runs again seeing its answer and the feedback, and the revised
// answer is the run's; the transcript holds only the final answer, the
// events both attempts. A judge that is never satisfied stops after
// max_revisions, the last answer standing.

const reviseConfig = `
providers:
  writer:
    type: scripted
    rules:
      - name: revised
        prefix: A reviewer asked you to revise your answer
        reply: The Eiffel Tower is in Paris, France.
      - name: draft
        reply: It is in Europe.
  critic:
    type: scripted
    rules:
      - name: too vague
        match: '(?s)## Answer\nIt is in Europe'
        reply: 'REVISE: name the city.'
      - name: fine
        reply: ACCEPT
  never-happy:
    type: scripted
    rules: [{reply: 'REVISE: try harder.'}]
agents:
  - id: careful
    engine: loop
    provider: writer
    revise: {judge: critic, max_revisions: 2}
  - id: doomed
    engine: loop
    provider: writer
    revise: {judge: never-happy, max_revisions: 1}
`

func TestReviseFromConfigOverREST(t *testing.T) {
	eachStore(t, testReviseOverREST)
}

func testReviseOverREST(t *testing.T, dsn string) {
	s := startStore(t, writeYAML(t, reviseConfig), dsn)
	_, run := s.postJSONRun(t, "/v1/agents/careful/messages", `{"text":"where is the Eiffel Tower?"}`)
	if run.Status != "completed" || run.lastText() != "The Eiffel Tower is in Paris, France." {
		t.Fatalf("careful: %s %q; want the revised answer", run.Status, run.lastText())
	}
	got := readJSON[runJSON](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
	if len(got.Messages) != 2 {
		t.Fatalf("the run's messages: %+v; want the question and the final answer alone", got.Messages)
	}
	evs := readUntilEnd(t, bufio.NewReader(s.get(t, "/v1/runs/"+run.ID+"/events").Body))
	if text := strings.Join(deltas(evs), ""); !strings.Contains(text, "Europe") || !strings.Contains(text, "Paris") {
		t.Fatalf("the run's streamed text %q: want both the draft and the revision", text)
	}

	_, run = s.postJSONRun(t, "/v1/agents/doomed/messages", `{"text":"where is the Eiffel Tower?"}`)
	if run.Status != "completed" || run.lastText() != "The Eiffel Tower is in Paris, France." {
		t.Fatalf("doomed: %s %q; want the one revision allowed to stand", run.Status, run.lastText())
	}
	evs = readUntilEnd(t, bufio.NewReader(s.get(t, "/v1/runs/"+run.ID+"/events").Body))
	var models int
	for _, ev := range evs {
		if p, _ := ev.data["payload"].(map[string]any); ev.typ == "step.start" && p["kind"] == "model" {
			models++
		}
	}
	if models != 2 {
		t.Fatalf("doomed made %d model turns, want 2 (max_revisions 1)", models)
	}
}

// Over A2A the revised answer is the task's: its history holds the
// question and the final answer alone (the draft "It is in Europe." is
// what the writer says unless a judge asked for a revision).
func TestReviseFromConfigOverA2A(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, writeYAML(t, reviseConfig), dsn)
		for _, agent := range []string{"careful", "doomed"} {
			res, err := agentA2A(t, s, agent).SendMessage(t.Context(), &a2a.SendMessageRequest{
				Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("where is the Eiffel Tower?"))})
			if err != nil {
				t.Fatalf("%s: %v", agent, err)
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("%s: %#v, want a completed task", agent, res)
			}
			if len(task.History) != 2 || task.History[1].Role != a2a.MessageRoleAgent ||
				task.History[1].Parts[0].Text() != "The Eiffel Tower is in Paris, France." {
				t.Fatalf("%s: history %v; want the question and the revised answer alone", agent, task.History)
			}
			evs := readUntilEnd(t, bufio.NewReader(s.get(t, "/v1/runs/"+string(task.ID)+"/events").Body))
			if text := strings.Join(deltas(evs), ""); !strings.Contains(text, "Europe") {
				t.Fatalf("%s: the run's streamed text %q: want the draft before the revision", agent, text)
			}
		}
	})
}
