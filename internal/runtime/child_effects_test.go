package runtime

import (
	"context"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
)

// effectful is a child engine that records one effectful call through
// its host's ledger, as the loop does: the intent, then the result. On a
// host without a ledger it fails, so a step whose tools would bypass the
// ledger cannot pass unnoticed.
type effectful struct{}

func (effectful) Execute(ctx context.Context, r engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
	l, ok := h.(engine.EffectLedger)
	if !ok {
		return b, errNoLedger
	}
	prior, err := l.PriorEffects(ctx)
	if err != nil {
		return b, err
	}
	key := r.ID + "/call_1"
	if _, done := prior[key]; !done {
		in := engine.Effect{Phase: engine.EffectIntent, CallID: "call_1", Tool: "charge", Key: key, Effects: "keyed"}
		out := engine.Effect{Phase: engine.EffectResult, CallID: "call_1", Tool: "charge", Key: key, Content: "charged"}
		if err := l.CommitEffects(ctx, nil, in); err != nil {
			return b, err
		}
		if err := l.CommitEffects(ctx, nil, out); err != nil {
			return b, err
		}
	}
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "charged"))
	return b, nil
}

// A workflow step's child run keeps the effect ledger: its tool calls'
// intents and results are durable events of the child's own log, as a
// top-level run's are (issue 36: steps' tool calls are no exception).
func TestChildRunKeepsTheEffectLedger(t *testing.T) {
	logModes(t, func(t *testing.T) {
		r := newTestRuntime(t, nil, testAgent("p", stepper{steps: []engine.Engine{effectful{}}}))
		parent := wait(t, r, send(t, r, "p", "go").ID)
		if parent.State != run.StateCompleted {
			t.Fatalf("parent %s: %+v", parent.State, parent.Error)
		}
		var fx []string
		for _, ev := range readAll(t, r, childRunID(parent.ID, "s1/1", 0), 0, true) {
			if ev.Type == EventEffectIntent || ev.Type == EventEffectResult {
				fx = append(fx, ev.Type)
			}
		}
		if len(fx) != 2 || fx[0] != EventEffectIntent || fx[1] != EventEffectResult {
			t.Fatalf("the child's log holds effect events %v, want its intent then its result", fx)
		}
	})
}

var errNoLedger = errorString("the child's host keeps no effect ledger")

type errorString string

func (e errorString) Error() string { return string(e) }
