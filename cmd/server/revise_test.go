package main

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
)

// The revise loop from configuration, through the REST API on memstore:
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
	s := startStore(t, writeYAML(t, reviseConfig), "")
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
