package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
)

// The log's bodies of typed engine events, byte for byte: a step that
// names no run is the host's run's, its actor folded to one token at the
// top and kept as published in the payload; a token's body is written by
// the log itself.
func TestEngineEventBodies(t *testing.T) {
	eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		step := engine.Step{Actor: "wf.node.n1", Kind: "node", Detail: map[string]int{"try": 1}}
		for _, ev := range []engine.Event{
			engine.StepStarted{Step: step},
			engine.Token{Actor: "wf.node.n1", Text: `<"hi">`},
			engine.ToolCall{Actor: "wf", ID: "c1", Name: "calc", Arguments: json.RawMessage(`{ "b": 1, "a": 2 }`)},
			engine.StepFailed{Step: step},
		} {
			if err := h.Publish(ctx, ev); err != nil {
				return b, err
			}
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "ok"))
		return b, nil
	})
	r := newTestRuntime(t, nil, testAgent("a", eng))
	task := send(t, r, "a", "x")
	until(t, func() bool { return r.launched() == 0 })
	var got []string
	for _, ev := range storedEvents(t, r.st, task.ID) {
		switch ev.Type {
		case EventStepStart, EventDelta, EventStepError:
			_, rest, _ := strings.Cut(string(ev.Data), `Z",`) // after the frame's time
			got = append(got, ev.Type+" "+rest)
		}
	}
	want := []string{
		`step.start "actor":"wf_node_n1","payload":{"run_id":"` + task.ID + `","actor":"wf.node.n1","kind":"node","detail":{"try":1}}}`,
		`delta "actor":"wf_node_n1","text":"\u003c\"hi\"\u003e"}`,
		`delta "actor":"wf","tool_call":{"id":"c1","name":"calc","arguments":{"b":1,"a":2}}}`,
		`step.error "actor":"wf_node_n1","payload":{"run_id":"` + task.ID + `","actor":"wf.node.n1","kind":"node","detail":{"try":1},"error":"step \"wf.node.n1\" failed without an error","error_class":"internal"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("event bodies:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
