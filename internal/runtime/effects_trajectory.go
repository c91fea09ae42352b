package runtime

import (
	"encoding/json"

	"agentd/internal/run"
)

// effect puts an effect ledger event on its call's tool step: the latest
// step of that call when one has started (a result, a doubt found when the
// step ran again), else held until it starts (an intent is durable before
// its call's step begins).
func (b *trajectoryBuilder) effect(ev run.Event) {
	var e struct {
		CallID string `json:"call_id"`
	}
	if json.Unmarshal(ev.Data, &e) != nil || e.CallID == "" {
		return
	}
	raw := json.RawMessage(ev.Data)
	for i := len(b.steps) - 1; i >= 0; i-- {
		if s := &b.steps[i]; s.Type == "tool" && s.CallID == e.CallID {
			if _, open := b.open[stepKey{actor: s.Actor, kind: "tool", callID: s.CallID, iteration: s.Iteration}]; open || s.Attempt == b.attempt {
				s.Effects = append(s.Effects, raw)
				return
			}
		}
	}
	if b.effects == nil {
		b.effects = map[string][]json.RawMessage{}
	}
	b.effects[e.CallID] = append(b.effects[e.CallID], raw)
}
