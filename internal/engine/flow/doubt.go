package flow

import (
	"fmt"
	"strings"

	"agentd/internal/engine"
)

// An action in doubt under policy ask waits for a person, as a flow's own
// input node does: a text question naming the action, its effect key and
// what happened, answered "retry" (run it again with the same key),
// "fail" (the action fails and the flow rolls back) or "skip: <result>"
// (the action is answered with that result and not run). The answer holds
// for this attempt (execution.doubts) and settleDoubt applies it.

// doubtAnswer is a person's answer to an action in doubt: how is
// engine.ResolvedRetried, ResolvedSkipped or ResolvedFailed.
type doubtAnswer struct {
	how, result string
}

// askDoubt asks a person about action n's call (key) when it is in doubt
// and its policy is ask; it returns at once otherwise.
func (x *execution) askDoubt(n *node, key string) error {
	led, ok := x.host.(engine.EffectLedger)
	if !ok || !x.e.effectsOf(n.do.name).Recorded() {
		return nil
	}
	if policy, _ := x.e.doubtPolicy(n.do.name); policy != engine.DoubtAsk {
		return nil
	}
	prior, err := led.PriorEffects(x.ctx)
	if err != nil || !prior[key].InDoubt() {
		return err
	}
	q := &node{id: n.id, behaviour: BehaviourInput, in: input{kind: InputText}, content: &text{src: fmt.Sprintf(
		"The action %s (%s, effect key %s) is in doubt: the run was cut after its intent was recorded and before its result was, so it may or may not have taken effect. "+
			`Answer "retry" to run it again with the same key, "fail" to fail it, or "skip: <the result it had>" to go on without running it.`,
		n.id, n.do.name, key)}}
	if w := x.st.Waiting; w == nil || w.Node != n.id || w.Visit != x.st.Visit {
		x.st.Waiting = &waiting{Node: n.id, Visit: x.st.Visit, Since: x.e.cfg.Now().UTC()}
		if err := x.checkpoint(); err != nil {
			return err
		}
	}
	for reason := ""; ; reason = `answer "retry", "fail" or "skip: <the result it had>"` {
		raw, err := x.answer(q, reason)
		if err != nil {
			return err
		}
		if a, ok := parseDoubtAnswer(raw); ok {
			x.st.Waiting = nil
			if x.doubts == nil {
				x.doubts = map[string]doubtAnswer{}
			}
			x.doubts[key] = a
			return nil
		}
	}
}

// parseDoubtAnswer reads a person's answer to an action in doubt.
func parseDoubtAnswer(raw string) (doubtAnswer, bool) {
	s := strings.TrimSpace(raw)
	switch low := strings.ToLower(s); {
	case low == "retry":
		return doubtAnswer{how: engine.ResolvedRetried}, true
	case low == "fail":
		return doubtAnswer{how: engine.ResolvedFailed}, true
	case strings.HasPrefix(low, "skip:") && strings.TrimSpace(s[len("skip:"):]) != "":
		return doubtAnswer{how: engine.ResolvedSkipped, result: strings.TrimSpace(s[len("skip:"):])}, true
	}
	return doubtAnswer{}, false
}
