package graph

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/model"
)

// callTool calls a workflow tool the way a step's agent does: with the
// context of the step's child run.
func callTool(ctx context.Context, name string, args any) (string, error) {
	b, _ := json.Marshal(args)
	r, err := Tool(name).Execute(ctx, b)
	if err != nil {
		return "", err
	}
	if r.IsError {
		return "", &toolError{r.Content}
	}
	return r.Content, nil
}

type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// writes stores key=value in shared memory and answers what the tool said.
func writes(key, value string) behaviour {
	return func(ctx context.Context, _ call) (string, error) {
		return callTool(ctx, SharedMemoryWriteTool, map[string]string{"key": key, "value": value})
	}
}

// reads answers the shared memory entry key.
func reads(key string) behaviour {
	return func(ctx context.Context, _ call) (string, error) {
		v, err := callTool(ctx, SharedMemoryReadTool, map[string]string{"key": key})
		if err != nil {
			return "read failed: " + err.Error(), nil
		}
		return "read " + v, nil
	}
}

const memoryDoc = `{name: memo, agents: {scout: {description: finds}, writer: {description: writes}},
	steps: [{id: find, agent: scout}, {id: report, agent: writer, dependsOn: [find]}]}`

func newMemoryEngine(t *testing.T, agents *fakeAgents) *Engine {
	t.Helper()
	e, err := New(Config{Workflow: mustParse(t, memoryDoc), Agents: agents, AgentID: "wf", SharedMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSharedMemory(t *testing.T) {
	agents := newFakeAgents(map[string]behaviour{"scout": writes("findings", "three moons"), "writer": reads("scout/findings")})
	h, board, err := execute(t, newMemoryEngine(t, agents), "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf(board); got != "read three moons" {
		t.Errorf("answer %q, want the dependent step to read the entry", got)
	}
	if m := stateOf(t, h).Memory; m["scout/findings"] != "three moons" {
		t.Errorf("checkpointed memory %v", m)
	}
	if v, _ := board.GetVar(SharedMemoryVar); v == nil {
		t.Error("the board does not mirror the shared memory")
	}
	var noted bool
	for _, ev := range h.Events() {
		if n, ok := ev.(engine.WorkflowNote); ok && n.Kind == "shared_memory_write" && strings.Contains(string(n.Payload), `"scout/findings"`) {
			noted = true
		}
	}
	if !noted {
		t.Errorf("no shared_memory_write note; events %v", h.Described())
	}
	if !hasCheckpoint(h, checkpointMemoryPrefix+"find") {
		t.Error("the write was not checkpointed at once")
	}
}

func hasCheckpoint(h *enginetest.RecordingHost, step string) bool {
	for _, cp := range h.Checkpoints() {
		if cp.Step == step {
			return true
		}
	}
	return false
}

func TestSharedMemoryRefusals(t *testing.T) {
	cases := []struct{ name, key, value, want string }{
		{"a slash in the key", "other/k", "v", "without /"},
		{"an empty key", " ", "v", "non-empty"},
		{"a value too large", "k", strings.Repeat("x", MaxMemoryValueBytes+1), "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got error
			agents := newFakeAgents(map[string]behaviour{"scout": func(ctx context.Context, _ call) (string, error) {
				_, got = callTool(ctx, SharedMemoryWriteTool, map[string]string{"key": c.key, "value": c.value})
				return "done", nil
			}})
			if _, _, err := execute(t, newMemoryEngine(t, agents), "go"); err != nil {
				t.Fatal(err)
			}
			if got == nil || !strings.Contains(got.Error(), c.want) {
				t.Errorf("write: %v, want an error containing %q", got, c.want)
			}
		})
	}
	if _, err := callTool(t.Context(), SharedMemoryReadTool, map[string]string{"key": "k"}); err == nil {
		t.Error("a call outside a workflow step succeeded")
	}
}

// A run that stops after a step wrote its entry resumes, from the
// checkpoint, with the entry there for the steps still to run.
func TestSharedMemoryRestoredOnResume(t *testing.T) {
	first := newFakeAgents(map[string]behaviour{"scout": writes("findings", "three moons"), "writer": block})
	e := newMemoryEngine(t, first)
	h := enginetest.NewRecordingHost()
	done := make(chan error, 1)
	go func() {
		_, err := e.Execute(t.Context(), engine.Run{ID: "run-1"}, h, boardWith("go"))
		done <- err
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := h.WaitForStep(ctx, "wf.node.report"); err != nil {
		t.Fatal(err)
	}
	h.Fire(engine.Interrupt{Cause: engine.CauseHostShutdown})
	if err := <-done; err == nil {
		t.Fatal("the interrupted run completed")
	}
	cps := h.Checkpoints()
	last := cps[len(cps)-1]

	second := newFakeAgents(map[string]behaviour{"writer": reads("scout/findings")})
	h2 := enginetest.NewRecordingHost()
	board, err := newMemoryEngine(t, second).Execute(t.Context(), engine.Run{ID: "run-1", ResumeFrom: &last}, h2, engine.NewBoard())
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf(board); got != "read three moons" {
		t.Errorf("resumed answer %q", got)
	}
	if steps := second.stepsCalled(); len(steps) != 1 || steps[0] != "report" {
		t.Errorf("resumed run ran %v, want only report", steps)
	}
}

func boardWith(request string) *engine.Board {
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, request))
	return b
}
