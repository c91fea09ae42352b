package flow_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/flow"
	"agentd/internal/tool"
)

// ledgerHost is a recording host with an effect ledger in memory: prior is
// what "earlier attempts" recorded; commits what this one records.
type ledgerHost struct {
	*enginetest.RecordingHost
	prior   map[string]engine.EffectRecord
	mu      sync.Mutex
	commits []engine.Effect
}

func (h *ledgerHost) PriorEffects(context.Context) (map[string]engine.EffectRecord, error) {
	return h.prior, nil
}

func (h *ledgerHost) CommitEffects(ctx context.Context, cp *engine.Checkpoint, evs ...engine.Effect) error {
	h.mu.Lock()
	h.commits = append(h.commits, evs...)
	h.mu.Unlock()
	for _, e := range evs {
		_ = h.Publish(ctx, e)
	}
	return nil
}

// resolutions are the resolutions h recorded, in order.
func (h *ledgerHost) resolutions() []string {
	var out []string
	for _, ev := range h.Events() {
		if e, ok := ev.(engine.Effect); ok && e.Phase == engine.EffectResolved {
			out = append(out, e.Resolution)
		}
	}
	return out
}

// An undo found in doubt (its intent recorded, its result not: the replica
// died during the compensation) follows the in_doubt policy as an action
// does: retry runs it again with the same key; fail reports the
// compensation failed without running it; ask, which is not put to a
// person for an undo, fails it too. Nothing in doubt runs again silently.
func TestUndoInDoubtFollowsThePolicy(t *testing.T) {
	const key = "trip:01_hotel:1:undo"
	for _, c := range []struct {
		policy, resolution string
		rerun              bool
	}{
		{"retry", engine.ResolvedRetried, true},
		{"fail", engine.ResolvedFailed, false},
		{"ask", engine.ResolvedFailed, false},
	} {
		t.Run(c.policy, func(t *testing.T) {
			eff := &effects{}
			reg := registry(t, eff, "rent_car")
			f := compile(t, "booking", reg)
			cfg := flow.Config{Flow: f, Tools: reg, AgentID: "agent",
				Effects: map[string]tool.Effects{"cancel_hotel": tool.EffectsUnsafe},
				InDoubt: map[string]string{"cancel_hotel": c.policy}}
			eng, err := flow.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			first := &ledgerHost{RecordingHost: enginetest.NewRecordingHost()}
			if _, err := execute(t, eng, engine.Run{ID: "trip"}, userBoard("book"), first); err == nil {
				t.Fatal("the booking succeeded")
			}
			from := pendingUndo(t, first, key)
			intent := engine.Effect{Phase: engine.EffectIntent, CallID: key, Tool: "cancel_hotel", Key: key}
			h := &ledgerHost{RecordingHost: enginetest.NewRecordingHost(), prior: map[string]engine.EffectRecord{key: {Intent: &intent}}}
			before := len(eff.all())
			_, err = execute(t, eng, engine.Run{ID: "trip", ResumeFrom: from}, engine.NewBoard(), h)
			if err == nil {
				t.Fatal("the resumed rollback succeeded; the flight still failed")
			}
			ran := strings.Contains(strings.Join(eff.all()[before:], ","), "cancel_hotel "+key)
			if ran != c.rerun {
				t.Errorf("the undo in doubt ran again: %v, want %v (calls %v)", ran, c.rerun, eff.all()[before:])
			}
			if got := h.resolutions(); len(got) != 1 || got[0] != c.resolution {
				t.Errorf("resolutions %v, want [%s]", got, c.resolution)
			}
			if !c.rerun && !strings.Contains(err.Error(), "compensation failed") {
				t.Errorf("error %v, want the compensation reported failed", err)
			}
		})
	}
}

// pendingUndo is the checkpoint h took with the undo key pending: where a
// replica that died during that compensation left the run.
func pendingUndo(t *testing.T, h *ledgerHost, key string) *engine.Checkpoint {
	t.Helper()
	for _, cp := range h.Checkpoints() {
		var st struct {
			P *struct {
				Key string `json:"idempotency_key"`
			} `json:"pending_tool_call"`
		}
		_ = json.Unmarshal(cp.Payload, &st)
		if st.P != nil && st.P.Key == key {
			return &cp
		}
	}
	t.Fatalf("no checkpoint with the undo %s pending", key)
	return nil
}
