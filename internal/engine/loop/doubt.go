package loop

import (
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// Calls in doubt: a resumed turn whose call has an intent and no result in
// the ledger does not run it again blindly. Its policy decides (doubtPolicy):
// retry runs it with the same key; reconcile asks the tool's status call
// and uses the effect's result when it happened (else runs it); ask parks
// the run in the approvals inbox, where approve retries, skip answers it
// with a given result and reject fails the run; fail fails the run naming
// the call. Each doubt and its resolution are logged (engine.Effect).

// crashNote is what a person is told about a call in doubt.
const crashNote = "the run was cut (a crash, a lost lease or a drain) after this call's intent was recorded and before its result was: it may or may not have taken effect"

// resolveDoubts finds p's calls in doubt and applies their policies. A
// call whose policy is ask becomes a gate waiting for a person.
func (x *execution) resolveDoubts(n int, p *pending) error {
	if !x.hasRecorded(p.Gates) {
		return nil
	}
	prior, err := x.prior()
	if err != nil || len(prior) == 0 {
		return err
	}
	for i := range p.Gates {
		g := &p.Gates[i]
		if !x.recorded(*g) || g.Effect != nil {
			continue
		}
		ev := x.effect(engine.EffectDoubt, n, *g)
		if !prior[ev.Key].InDoubt() {
			continue
		}
		ev.Policy, ev.Arguments, ev.Reason = x.e.doubtPolicy(g.Call.Name), g.Call.Arguments, crashNote
		x.publish(ev)
		if err := x.applyPolicy(n, g, ev.Policy); err != nil {
			return err
		}
	}
	return nil
}

// applyPolicy resolves the doubt of gate g (the i-th call of iteration n).
func (x *execution) applyPolicy(n int, g *gate, policy string) error {
	switch policy {
	case engine.DoubtRetry:
		x.resolved(n, g, engine.ResolvedRetried, nil, "retried with the same effect key")
	case engine.DoubtReconcile:
		return x.reconcile(n, g)
	case engine.DoubtAsk:
		g.Outcome, g.Why = gateAsk, "in doubt: "+crashNote
		g.Effect = &gateEffect{Doubt: true}
	default:
		x.resolved(n, g, engine.ResolvedFailed, nil, "policy fail")
		return x.doubtFailed(n, *g, "its in_doubt policy is fail")
	}
	return nil
}

// reconcile asks g's tool whether the effect happened.
func (x *execution) reconcile(n int, g *gate) error {
	t, _ := x.e.cfg.Tools.Get(g.Call.Name)
	rc, ok := t.(tool.Reconciler)
	if !ok {
		x.resolved(n, g, engine.ResolvedFailed, nil, "no status call")
		return x.doubtFailed(n, *g, "its policy is reconcile and the tool has no status call")
	}
	call := tool.CallOf(g.Call)
	call.IdempotencyKey, _ = x.effectKey(n, *g)
	ctx := tool.ContextWithCall(engine.WithRunID(engine.WithHost(&x.work, x.host), x.run.ID), call)
	r, found, err := rc.Reconcile(ctx, call)
	switch {
	case err != nil:
		x.resolved(n, g, engine.ResolvedFailed, nil, "status call failed: "+err.Error())
		return x.doubtFailed(n, *g, "its status call failed: "+err.Error())
	case found:
		x.resolved(n, g, engine.ResolvedReconciled, &r.Content, "the status call found the effect")
	default:
		x.resolved(n, g, engine.ResolvedAbsent, nil, "the status call found no effect: the call runs")
	}
	return nil
}

// resolved records g's resolution (result: the answer it gets without
// running, if any) and logs it.
func (x *execution) resolved(n int, g *gate, how string, result *string, reason string) {
	g.Effect = &gateEffect{Doubt: g.Effect != nil && g.Effect.Doubt, Resolution: how, Result: result}
	ev := x.effect(engine.EffectResolved, n, *g)
	ev.Resolution, ev.Reason = how, reason
	if result != nil {
		ev.Content = *result
	}
	x.publish(ev)
}

// doubtFailed is the error that fails the run for the i-th call, named.
func (x *execution) doubtFailed(n int, g gate, why string) error {
	key, _ := x.effectKey(n, g)
	return errdefs.Conflictf("loop agent %q: tool call %s (%s %s, effect key %s) is in doubt after the run was cut, and %s",
		x.actor, g.Call.ID, g.Call.Name, g.Call.Arguments, key, why)
}

// answerDoubt applies a person's answer a to gate g, a call in doubt:
// approve retries it, skip answers it with a.Result, reject fails the run
// (after the approvals are all in: applyDoubtAnswers).
func (x *execution) answerDoubt(n int, g *gate, a engine.ApprovalAnswer) {
	switch a.Decision {
	case engine.DecisionSkip:
		res := a.Result
		g.Outcome = gateRun
		x.resolved(n, g, engine.ResolvedSkipped, &res, "skipped by a person: "+a.Reason)
	case engine.DecisionReject:
		g.Outcome = gateRun
		x.resolved(n, g, engine.ResolvedFailed, nil, "failed by a person: "+a.Reason)
	default: // approve (an edit is a retry with the proposed arguments)
		g.Outcome = gateRun
		x.resolved(n, g, engine.ResolvedRetried, nil, "retried by a person")
	}
}

// failedDoubt returns the error of the first of gates a person failed.
func (x *execution) failedDoubt(n int, gates []gate) error {
	for _, g := range gates {
		if g.Effect != nil && g.Effect.Resolution == engine.ResolvedFailed {
			return x.doubtFailed(n, g, "a person answered fail")
		}
	}
	return nil
}

// doubts reports whether p waits for a person's answer on a call in doubt.
func doubts(p *pending) bool {
	for _, g := range p.Gates {
		if g.Outcome == gateAsk && g.Effect != nil && g.Effect.Doubt {
			return true
		}
	}
	return false
}

// doubtKey is the effect key of p's call callID.
func (x *execution) doubtKey(p *pending, callID string) string {
	for _, g := range p.Gates {
		if g.Call.ID == callID {
			key, _ := x.effectKey(p.Iteration, g)
			return key
		}
	}
	return ""
}
