package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The team demo end to end: the coordinator directs the two researchers,
// their notes land in shared memory, which the editor merges; the answer
// is the coordinator's summary. The Agent Protocol shows the shared memory
// in the thread's state (REST in the run's checkpoints, where they are
// kept: TestSharedMemorySurvivesItsReplica).
func TestTeamDemo(t *testing.T) {
	s := start(t)
	_, run := s.postJSONRun(t, "/v1/agents/team/messages", `{"text": "the moons of Jupiter"}`)
	if run.Status != "completed" || !strings.HasPrefix(run.lastText(), "Summary on the moons of Jupiter:") {
		t.Fatalf("run %s %q, want completed with the coordinator's summary", run.Status, run.lastText())
	}
	wantNotes := []string{`"historian/notes":"three findings on the early history of the moons of Jupiter"`,
		`"scientist/notes":"three findings on the science of the moons of Jupiter"`}
	events := sseBody(t, s, "/v1/runs/"+run.ID+"/events")
	for _, kind := range []string{`"kind":"coordinator_message"`, `"kind":"coordinator_inbox_message"`, `"kind":"coordinator_synthesis"`, `"kind":"shared_memory_write"`} {
		if !strings.Contains(events, kind) {
			t.Errorf("the run's events lack a workflow event %s", kind)
		}
	}

	var th struct {
		ThreadID string `json:"thread_id"`
	}
	s.call(t, "", "POST", "/lg/threads", `{}`).json(t, &th)
	if r := s.call(t, "", "POST", "/lg/threads/"+th.ThreadID+"/runs/wait",
		`{"assistant_id":"team","input":{"messages":[{"role":"user","content":"the moons of Jupiter"}]}}`); r.status != http.StatusOK {
		t.Fatalf("Agent Protocol run: %d %s", r.status, r.body)
	}
	var state struct {
		Values map[string]json.RawMessage `json:"values"`
	}
	s.call(t, "", "GET", "/lg/threads/"+th.ThreadID+"/state", "").json(t, &state)
	for _, w := range wantNotes {
		if !strings.Contains(string(state.Values["shared_memory"]), w) {
			t.Errorf("the thread's state shows shared memory %s, lacking %s", state.Values["shared_memory"], w)
		}
	}
}

// partialYAML: under skip-dependents, bad fails (it never submits the
// result its schema asks for), its dependent is skipped, free completes.
const partialYAML = `
providers:
  s: {type: scripted, rules: [{reply: fine}]}
agents:
  - id: partial
    engine: graph
    provider: s
    workflow:
      name: partial
      agents: {strict: {description: Must submit., resultSchema: {type: object, required: [count], properties: {count: {type: integer}}}}}
      steps:
        - {id: bad, agent: strict}
        - {id: after, dependsOn: [bad]}
        - {id: free}
      options: {onStepFailure: skip-dependents}
`

// A partial workflow is completed with outcome partial beside its status:
// in the REST run and its run.end event, and in the Agent Protocol run's
// metadata.
func TestPartialWorkflowOnTheFaces(t *testing.T) {
	s := start(t, "--config", configFile(t, partialYAML))
	run := readJSON[struct {
		ID       string         `json:"id"`
		Status   string         `json:"status"`
		Outcome  string         `json:"outcome"`
		Metadata map[string]any `json:"metadata"`
	}](t, s.post(t, "/v1/agents/partial/messages", `{"text": "go"}`), http.StatusOK)
	detail, _ := run.Metadata["outcome_detail"].(map[string]any)
	if run.Status != "completed" || run.Outcome != "partial" || detail == nil {
		t.Fatalf("run %+v: want completed, outcome partial, with its detail", run)
	}
	if failed, _ := detail["failed"].([]any); len(failed) != 1 || failed[0] != "bad" {
		t.Errorf("outcome detail %v, want bad failed", detail)
	}
	if events := sseBody(t, s, "/v1/runs/"+run.ID+"/events"); !strings.Contains(events, `"type":"run.end","time"`) || !strings.Contains(events, `"outcome":"partial"`) {
		t.Errorf("the run's events do not end with outcome partial:\n%s", events)
	}

	var th struct {
		ThreadID string `json:"thread_id"`
	}
	s.call(t, "", "POST", "/lg/threads", `{}`).json(t, &th)
	s.call(t, "", "POST", "/lg/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"partial","input":{"messages":[{"role":"user","content":"go"}]}}`)
	var runs []struct {
		Status   string         `json:"status"`
		Metadata map[string]any `json:"metadata"`
	}
	s.call(t, "", "GET", "/lg/threads/"+th.ThreadID+"/runs", "").json(t, &runs)
	if len(runs) != 1 || runs[0].Status != "success" || runs[0].Metadata["outcome"] != "partial" {
		t.Errorf("Agent Protocol runs %+v, want one success with metadata.outcome partial", runs)
	}

	// The AI SDK stream's finish part carries it as the message's metadata.
	chat := s.post(t, "/ai-sdk/agents/partial/chat", `{"id":"partial-chat","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"go"}]}]}`)
	b, err := io.ReadAll(chat.Body)
	chat.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"type":"finish","finishReason":"stop","messageMetadata":{"outcome":"partial"}}`) {
		t.Errorf("the AI SDK stream does not finish with metadata outcome partial:\n%s", b)
	}
}

// sseBody reads an event stream that ends (a finished run's) whole.
func sseBody(t *testing.T, s *server, path string) string {
	t.Helper()
	res := s.get(t, path)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
