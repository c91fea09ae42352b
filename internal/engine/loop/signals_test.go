package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// steeringHost is a host that pauses (engine.Pauser) once a checkpoint
// follows a pause request, and hands out feedback (engine.FeedbackSource).
type steeringHost struct {
	engine.NoopHost
	mu          sync.Mutex
	asked       bool
	armed       bool
	checkpoints []engine.Checkpoint
	feedback    []model.Message
}

func (h *steeringHost) Checkpoint(_ context.Context, cp engine.Checkpoint) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checkpoints = append(h.checkpoints, cp)
	h.armed = h.asked
	return nil
}

func (h *steeringHost) PauseNow() (engine.Interrupt, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.armed {
		return engine.Interrupt{}, false
	}
	h.asked, h.armed = false, false
	return engine.Interrupt{Cause: engine.CausePause}, true
}

func (h *steeringHost) TakeFeedback() []model.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.feedback
	h.feedback = nil
	return out
}

// TestPauseAtCheckpoint: a pause asked while a tool call runs lets the call
// finish, then stops the loop at the iteration's checkpoint, before the
// next model turn.
func TestPauseAtCheckpoint(t *testing.T) {
	h := &steeringHost{}
	prov := &recordingProvider{inner: newScripted(t, calcRules()...)}
	pausing := tool.New(tool.Spec{Name: "counter", Description: "asks for a pause while it runs"},
		func(context.Context, json.RawMessage) (tool.Result, error) {
			h.mu.Lock()
			h.asked = true
			h.mu.Unlock()
			return tool.Text("1"), nil
		})
	var reg tool.Registry
	if err := reg.Register(pausing); err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, loop.Config{Provider: prov, Tools: &reg, ToolNames: []string{"counter"}})
	if !engine.Pausable(eng) {
		t.Fatal("the loop does not declare itself pause-aware")
	}
	board, err := eng.Execute(t.Context(), engine.Run{ID: "r1"}, h, userBoard("count once"))
	var ie engine.InterruptedError
	if !errors.As(err, &ie) || ie.Cause != engine.CausePause {
		t.Fatalf("Execute: %v, want the pause", err)
	}
	msgs := board.ChannelView(engine.MainChannel)
	last := msgs[len(msgs)-1]
	if last.Role != model.RoleTool || len(prov.requests()) != 1 {
		t.Fatalf("stopped with %d model turns, last message %s; want 1 turn and the tool's result", len(prov.requests()), last.Role)
	}
	if len(h.checkpoints) != 1 || h.checkpoints[0].Step != "iter:1" || len(h.checkpoints[0].Board.Channels[engine.MainChannel]) != len(msgs) {
		t.Fatalf("checkpoints %+v; want iter:1 holding the board", h.checkpoints)
	}
}

// TestFeedbackBeforeNextTurn: feedback taken before a model turn is a user
// message of that turn's request, and the board keeps it.
func TestFeedbackBeforeNextTurn(t *testing.T) {
	h := &steeringHost{feedback: []model.Message{model.NewText(model.RoleUser, "say it")}}
	prov := &recordingProvider{inner: newScripted(t, scripted.Rule{Prefix: "say", Reply: "said"})}
	eng := newEngine(t, loop.Config{Provider: prov})
	board, err := eng.Execute(t.Context(), engine.Run{ID: "r2"}, h, userBoard("hello"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := prov.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[0].Messages
	if got := msgs[len(msgs)-1]; got.Role != model.RoleUser || got.Text() != "say it" {
		t.Fatalf("last message of the request: %s %q", got.Role, got.Text())
	}
	out := board.ChannelView(engine.MainChannel)
	if out[len(out)-1].Text() != "said" || out[len(out)-2].Metadata[loop.MetadataUserFeedback] != true {
		t.Fatalf("board: %+v", out)
	}
}
