package a2a_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/runtime"
)

// partialWorkflow stands for a workflow whose failed step the others
// worked around: it answers and reports a partial outcome.
var partialWorkflow = engine.EngineFunc(func(ctx context.Context, _ engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "what the rest produced"))
	return b, h.Publish(ctx, engine.Outcome{Actor: "echo", Status: engine.OutcomePartial, Detail: json.RawMessage(`{"failed":["bad"]}`)})
})

// A partial workflow is completed for A2A, with metadata.outcome
// "partial" on its final status update and on the task.
func TestPartialOutcomeThroughTheClient(t *testing.T) {
	e := newEnvServer(t, 0, func(agents []*runtime.Agent) {
		for _, a := range agents {
			if a.ID == "echo" {
				a.Engine = partialWorkflow
			}
		}
	})
	for _, b := range []binding{bindings[0], bindings[3]} {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "echo", b)
			evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("go")))
			var last *a2a.TaskStatusUpdateEvent
			var id a2a.TaskID
			for _, ev := range evs {
				switch v := ev.(type) {
				case *a2a.TaskStatusUpdateEvent:
					last, id = v, v.TaskID
				case *a2a.Task:
					id = v.ID
				}
			}
			if last == nil || last.Status.State != a2a.TaskStateCompleted || last.Metadata[runtime.MetaOutcome] != "partial" {
				t.Fatalf("last status update %+v: want completed with metadata.outcome partial", last)
			}
			task, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			if task.Status.State != a2a.TaskStateCompleted || task.Metadata[runtime.MetaOutcome] != "partial" {
				t.Errorf("task %s, metadata %v: want completed with outcome partial", task.Status.State, task.Metadata)
			}
		})
	}
}

// The team demo through a2a-go's client: the run completes and its answer
// is the coordinator's summary.
func TestCoordinatedWorkflowThroughTheClient(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "team", bindings[0])
	evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("the moons of Jupiter")))
	if got := finalState(evs); got != a2a.TaskStateCompleted {
		t.Fatalf("final state %s", got)
	}
	if text := answerText(evs); !strings.Contains(text, "Summary on the moons of Jupiter:") {
		t.Errorf("answer %q, want the coordinator's summary", text)
	}
}
