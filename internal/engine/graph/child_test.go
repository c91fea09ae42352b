package graph

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/model"
)

// childRunner is a recording host that runs child runs itself, as the
// runtime does: under a run id of its own, publishing through the child's
// ChildRun.Host.
type childRunner struct {
	*enginetest.RecordingHost
	mu   sync.Mutex
	runs []engine.ChildRun
}

func (h *childRunner) RunChild(ctx context.Context, c engine.ChildRun, eng engine.Engine, b *engine.Board) (*engine.Board, error) {
	h.mu.Lock()
	h.runs = append(h.runs, c)
	h.mu.Unlock()
	run := c.Run
	run.ID = "child-" + strings.ReplaceAll(c.Key, "/", "-")
	return eng.Execute(ctx, run, c.Host, b)
}

// With an engine.ChildRunner host, every agent step runs through it, keyed
// by step and attempt (a retry is a new child), its events nested under
// the step; the plan is published on the run's plan subject first.
func TestStepsRunAsChildRunsOfTheHost(t *testing.T) {
	calls := 0
	agents := newFakeAgents(map[string]behaviour{"flaky": func(ctx context.Context, c call) (string, error) {
		_ = c.host.Publish(ctx, engine.Token{Actor: "flaky", Text: "tok"})
		if calls++; calls == 1 {
			return "", errors.New("first attempt fails")
		}
		return "ok", nil
	}})
	e := newTestEngine(t, `{name: kids, agents: {w: {description: w}, flaky: {description: f}}, steps: [{id: a, agent: w}, {id: b, agent: flaky, retries: 1, dependsOn: [a]}]}`, agents)
	h := &childRunner{RecordingHost: enginetest.NewRecordingHost()}
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "go"))
	if _, err := e.Execute(t.Context(), engine.Run{ID: "run-1"}, h, board); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range h.runs {
		keys = append(keys, c.Key+"@"+c.Step)
		if c.Run.ParentRunID != "run-1" || c.Run.Attributes[AttrStep] != c.Step {
			t.Errorf("child %s: run %+v", c.Key, c.Run)
		}
	}
	if want := []string{"a/1@a", "b/1@b", "b/2@b"}; !slices.Equal(keys, want) {
		t.Fatalf("child runs %v, want %v", keys, want)
	}
	events := h.Described()
	if i := slices.Index(events, "plan wf"); i != 0 {
		t.Fatalf("events %v, want the plan first", events)
	}
	var plan struct {
		Workflow string `json:"workflow"`
		Steps    []struct {
			ID        string   `json:"id"`
			DependsOn []string `json:"dependsOn"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(h.Events()[0].(engine.Plan).Plan, &plan); err != nil || plan.Workflow != "kids" || len(plan.Steps) != 2 || plan.Steps[1].DependsOn[0] != "a" {
		t.Fatalf("plan %+v (%v)", plan, err)
	}
	if !slices.Contains(events, "token wf.node.b/flaky") {
		t.Fatalf("the child's token is not nested under step b: %v", events)
	}
}
