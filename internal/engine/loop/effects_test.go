package loop_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// ledgerHost is a recording host that keeps an effect ledger in memory;
// prior is what "earlier attempts" recorded.
type ledgerHost struct {
	*enginetest.RecordingHost
	mu      sync.Mutex
	prior   map[string]engine.EffectRecord
	commits []engine.Effect
}

func newLedgerHost(prior map[string]engine.EffectRecord) *ledgerHost {
	return &ledgerHost{RecordingHost: enginetest.NewRecordingHost(), prior: prior}
}

func (h *ledgerHost) PriorEffects(context.Context) (map[string]engine.EffectRecord, error) {
	return h.prior, nil
}

func (h *ledgerHost) CommitEffects(ctx context.Context, cp *engine.Checkpoint, evs ...engine.Effect) error {
	for _, e := range evs {
		_ = h.Publish(ctx, e)
	}
	h.mu.Lock()
	h.commits = append(h.commits, evs...)
	h.mu.Unlock()
	if cp != nil {
		return h.Checkpoint(ctx, *cp)
	}
	return nil
}

// ledger is what h committed, by key, as a later attempt reads it.
func (h *ledgerHost) ledger(withResults bool) map[string]engine.EffectRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]engine.EffectRecord{}
	for _, e := range h.commits {
		r := out[e.Key]
		switch {
		case e.Phase == engine.EffectIntent:
			r.Intent = &e
		case e.Phase == engine.EffectResult && withResults:
			r.Result = &e
		}
		out[e.Key] = r
	}
	return out
}

// effectEngine is the loop with the counter declared keyed, and policy
// for it in doubt.
func effectEngine(t *testing.T, cnt *counter, policy string) *loop.Engine {
	cfg := loop.Config{Tools: registry(t, cnt), ToolNames: []string{"counter"},
		Effects: map[string]tool.Effects{"counter": tool.EffectsKeyed}}
	if policy != "" {
		cfg.InDoubt = map[string]string{"counter": policy}
	}
	return newEngine(t, cfg)
}

// firstAttempt runs "count once" to its end and returns its host and the
// checkpoint that holds the turn and its intent (what a replica killed
// after it leaves).
func firstAttempt(t *testing.T, cnt *counter) (*ledgerHost, engine.Checkpoint) {
	t.Helper()
	h := newLedgerHost(nil)
	eng := effectEngine(t, cnt, "")
	if _, err := eng.Execute(t.Context(), engine.Run{ID: "r1"}, h, userBoard("count once")); err != nil {
		t.Fatal(err)
	}
	for _, cp := range h.Checkpoints() {
		if len(cp.Payload) > 0 {
			return h, cp
		}
	}
	t.Fatal("no checkpoint of the turn before its call")
	return nil, engine.Checkpoint{}
}

// resumeCut runs the attempt after a crash from cp with prior in the ledger.
func resumeCut(t *testing.T, eng *loop.Engine, cp engine.Checkpoint, h *ledgerHost) (*engine.Board, error) {
	ctx := engine.WithResumeContext(t.Context(), engine.ResumeContext{Attempt: 2, Signal: "crash", Step: cp.Step})
	return eng.Execute(ctx, engine.Run{ID: "r1", ResumeFrom: &cp}, h, engine.NewBoard())
}

func answerOf(b *engine.Board) string {
	msgs := b.Channel(engine.MainChannel)
	return msgs[len(msgs)-1].Text()
}

// A call with effects: its intent is committed with the turn's checkpoint
// before it runs, its result after, under one key the tool received.
// Resumed after the result, the call does not run again; resumed after
// the intent alone it is in doubt, and each policy resolves it.
func TestLoopEffectLedger(t *testing.T) {
	cnt := &counter{}
	first, cp := firstAttempt(t, cnt)
	calls := cnt.calls.Load()
	keys := cnt.Keys()
	ledger := first.ledger(true)
	if len(ledger) != 1 || !strings.HasPrefix(keys[len(keys)-1], "fx-") || ledger[keys[len(keys)-1]].Result == nil {
		t.Fatalf("ledger %v, keys %v", ledger, keys)
	}
	key := keys[len(keys)-1]

	t.Run("result recorded: not run again", func(t *testing.T) {
		b, err := resumeCut(t, effectEngine(t, cnt, ""), cp, newLedgerHost(first.ledger(true)))
		if err != nil || cnt.calls.Load() != calls || answerOf(b) != "counted "+ledger[key].Result.Content {
			t.Fatalf("err %v, calls %d (want %d), answer %q", err, cnt.calls.Load(), calls, answerOf(b))
		}
	})
	t.Run("retry with the same key", func(t *testing.T) {
		h := newLedgerHost(first.ledger(false))
		_, err := resumeCut(t, effectEngine(t, cnt, ""), cp, h)
		if got := cnt.Keys(); err != nil || cnt.calls.Load() != calls+1 || got[len(got)-1] != key {
			t.Fatalf("err %v, calls %d, keys %v; want one more call with key %s", err, cnt.calls.Load(), got, key)
		}
		calls++
	})
	t.Run("fail names the call", func(t *testing.T) {
		_, err := resumeCut(t, effectEngine(t, cnt, "fail"), cp, newLedgerHost(first.ledger(false)))
		if !errdefs.IsConflict(err) || !strings.Contains(err.Error(), "counter") || !strings.Contains(err.Error(), key) || cnt.calls.Load() != calls {
			t.Fatalf("err %v, calls %d", err, cnt.calls.Load())
		}
	})
	t.Run("ask, then skip with a result", func(t *testing.T) {
		h := newLedgerHost(first.ledger(false))
		h.AskUserFn = func(_ context.Context, p engine.UserPrompt) (engine.UserReply, error) {
			pending := engine.PendingApprovals(p.Parts)
			if len(pending) != 1 || !pending[0].InDoubt || pending[0].EffectKey != key {
				t.Errorf("prompt's pending calls %+v", pending)
			}
			part, _ := model.DataPart(map[string]any{"approvals": []engine.ApprovalAnswer{{CallID: pending[0].CallID, Decision: engine.DecisionSkip, Result: "by hand"}}})
			return engine.UserReply{Parts: []model.Part{part}}, nil
		}
		b, err := resumeCut(t, effectEngine(t, cnt, "ask"), cp, h)
		if err != nil || answerOf(b) != "counted by hand" || cnt.calls.Load() != calls {
			t.Fatalf("err %v, answer %q, calls %d", err, answerOf(b), cnt.calls.Load())
		}
	})
}
