package a2a_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/engine"
	"agentd/internal/run"
)

// The research demo workflow through a2a-go's client: a streamed run shows
// one artifact per step, named after the step, and completes; a run
// canceled mid-workflow ends canceled, and so does every step that was
// running (each step is a child run, a task of its own).
func TestWorkflowThroughTheClient(t *testing.T) {
	e := newEnv(t)
	for _, b := range []binding{bindings[0], bindings[3]} {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "research", b)
			t.Run("stream", func(t *testing.T) {
				evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("quantum computing")))
				if got := finalState(evs); got != a2a.TaskStateCompleted {
					t.Fatalf("final state %s", got)
				}
				var names []string
				for _, ev := range evs {
					if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && a.Artifact.Name != "answer" && !slices.Contains(names, a.Artifact.Name) {
						names = append(names, a.Artifact.Name)
					}
				}
				for _, step := range []string{"plan", "history", "technology", "impact", "write", "review", "publish"} {
					if !slices.Contains(names, step) {
						t.Errorf("no artifact named %q; artifacts %v", step, names)
					}
				}
				for _, ev := range evs {
					if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && a.Artifact.Name == "publish" {
						if text := a.Artifact.Parts[0].Text(); !strings.HasPrefix(text, "Final report on quantum computing") {
							t.Errorf("publish artifact %q", text)
						}
					}
				}
			})
			t.Run("cancel", func(t *testing.T) {
				ctx := ctxT(t)
				var taskID a2a.TaskID
				var evs []a2a.Event
				canceled := make(chan error, 1)
				planned, asked := false, false
				for ev, err := range c.SendStreamingMessage(ctx, sendReq("quantum computing")) {
					if err != nil {
						t.Fatalf("stream error after %d events: %v", len(evs), err)
					}
					evs = append(evs, ev)
					if task, ok := ev.(*a2a.Task); ok {
						taskID = task.ID
					}
					// Once the plan is done, the three researchers run: cancel
					// at the first token of their answers.
					a, ok := ev.(*a2a.TaskArtifactUpdateEvent)
					if ok && a.Artifact.Name == "plan" {
						planned = true
					}
					if ok && planned && !asked && a.Artifact.Name == "answer" {
						asked = true
						go func() {
							_, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: taskID})
							canceled <- err
						}()
					}
				}
				if !asked {
					t.Fatalf("no researcher streamed after the plan: %d events", len(evs))
				}
				if err := <-canceled; err != nil {
					t.Fatal(err)
				}
				if got := finalState(evs); got != a2a.TaskStateCanceled {
					t.Fatalf("final state %s, want canceled", got)
				}
				for _, ev := range evs {
					if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && a.Artifact.Name == "publish" {
						t.Fatal("the workflow went on to publish after the cancel")
					}
				}
				task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
				if err != nil || task.Status.State != a2a.TaskStateCanceled {
					t.Fatalf("task %+v %v, want canceled", task, err)
				}
				page, err := e.rt.ListTasks(ctx, run.TaskQuery{AgentID: "research", Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				steps := map[string]run.TaskState{}
				for _, ch := range page.Tasks {
					if ch.Metadata[engine.MetaParentRunID] == string(taskID) {
						steps[ch.Metadata[engine.MetaParentStep].(string)] = ch.State
					}
				}
				if steps["plan"] != run.StateCompleted {
					t.Errorf("plan step's child run %q, want completed", steps["plan"])
				}
				running := 0
				for step, state := range steps {
					switch state {
					case run.StateCanceled:
						running++
					case run.StateCompleted:
					default:
						t.Errorf("step %s's child run is %s after the cancel", step, state)
					}
				}
				if running == 0 {
					t.Errorf("no step was running at the cancel: %v", steps)
				}
			})
		})
	}
}
