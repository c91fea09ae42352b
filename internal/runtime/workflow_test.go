package runtime

import (
	"context"
	"encoding/json"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
)

// partialEngine answers, notes a workflow message and reports a partial
// outcome, as the graph engine does for a workflow whose failed step the
// rest worked around.
func partialEngine() engine.Engine {
	return engine.EngineFunc(func(ctx context.Context, _ engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		if err := h.Publish(ctx, engine.WorkflowNote{Actor: "wf.node.a", Kind: "message_sent", Payload: json.RawMessage(`{"from":"a","to":"coordinator"}`)}); err != nil {
			return b, err
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "what the rest produced"))
		return b, h.Publish(ctx, engine.Outcome{Actor: "wf", Status: engine.OutcomePartial, Detail: json.RawMessage(`{"failed":["bad"]}`)})
	})
}

// A partial outcome leaves the task completed, with the outcome beside
// its state: in its metadata, its final status event and its run.end.
// A workflow note is a workflow event of the log.
func TestPartialOutcomeIsRecorded(t *testing.T) {
	logModes(t, func(t *testing.T) {
		r := newTestRuntime(t, nil, testAgent("wf", partialEngine()), testAgent("plain", streamer(2, nil)))
		task := wait(t, r, send(t, r, "wf", "go").ID)
		if task.State != run.StateCompleted || OutcomeOf(task) != engine.OutcomePartial || task.Metadata[MetaOutcomeDetail] == nil {
			t.Fatalf("task %s, metadata %v: want completed with outcome partial and its detail", task.State, task.Metadata)
		}
		var sawNote, sawStatus, sawEnd bool
		for _, ev := range readAll(t, r, task.ID, 0, true) {
			var d struct {
				State   run.TaskState `json:"state"`
				Outcome string        `json:"outcome"`
				Kind    string        `json:"kind"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			switch ev.Type {
			case EventWorkflow:
				sawNote = d.Kind == "message_sent"
			case EventStatus:
				sawStatus = sawStatus || d.State == run.StateCompleted && d.Outcome == "partial"
			case EventRunEnd:
				sawEnd = d.Outcome == "partial"
			}
		}
		if !sawNote || !sawStatus || !sawEnd {
			t.Errorf("workflow note %v, completed status with outcome %v, run.end with outcome %v: want all", sawNote, sawStatus, sawEnd)
		}
		plain := wait(t, r, send(t, r, "plain", "go").ID)
		if OutcomeOf(plain) != "" {
			t.Errorf("a full completion has outcome %q", OutcomeOf(plain))
		}
	})
}
