package flow

import (
	"context"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// Effects: an action (or an undo) whose tool has effects is recorded in the
// host's effect ledger (engine.EffectLedger) — its intent durable before
// it runs, its result before the flow goes on — under the action's key
// (IdempotencyKey: run, node, visit, ":undo" for a compensation), which
// the tool receives. A call the flow replays after a cut (its pending
// checkpoint) that the ledger shows intended and not finished is in doubt,
// and its policy decides: retry with the same key, reconcile with the
// tool's status call, ask a person first (doubt.go: retry, skip with a
// result, or fail), or fail — an action that fails rolls the flow back,
// and an undo in doubt fails the compensation (an undo is not asked:
// under ask it fails). A recorded result is used as it
// is, never run again.

// effectsOf is the effect kind of tool name.
func (e *Engine) effectsOf(name string) tool.Effects {
	if k := e.cfg.Effects[name]; k != "" {
		return k
	}
	if t, ok := e.cfg.Tools.Get(name); ok {
		return t.Flags().EffectsOf()
	}
	return tool.EffectsNone
}

// doubtPolicy is the policy for tool name's call found in doubt.
func (e *Engine) doubtPolicy(name string) (string, tool.Reconciler) {
	t, _ := e.cfg.Tools.Get(name)
	rc, _ := t.(tool.Reconciler)
	if rc != nil && !tool.CanReconcile(t) {
		rc = nil
	}
	p := e.cfg.InDoubt[name]
	if p == "" {
		p = e.cfg.InDoubt["*"]
	}
	if p == "" || p == engine.DoubtReconcile && rc == nil {
		p = tool.DefaultDoubtPolicy(e.effectsOf(name), rc != nil)
	}
	return p, rc
}

// ledgered runs call c through the ledger when its tool has effects.
func (x *execution) ledgered(ctx context.Context, actor string, c tool.Call, replay bool) tool.Result {
	exec := func() tool.Result { return x.e.cfg.Tools.Execute(engine.WithHost(ctx, x.host), c) }
	led, ok := x.host.(engine.EffectLedger)
	kind := x.e.effectsOf(c.Name)
	if !ok || !kind.Recorded() {
		return exec()
	}
	ev := engine.Effect{Actor: actor, CallID: c.ID, Tool: c.Name, Key: c.IdempotencyKey,
		Digest: engine.ArgsDigest(c.Arguments), Effects: string(kind)}
	if replay {
		if r, done := x.settleDoubt(ctx, led, ev, c); done {
			return r
		}
	} else if err := led.CommitEffects(ctx, nil, intent(ev, c)); err != nil {
		return ledgerFailed(c, err)
	}
	return x.record(ctx, led, ev, exec())
}

func intent(ev engine.Effect, c tool.Call) engine.Effect {
	ev.Phase, ev.Arguments = engine.EffectIntent, c.Arguments
	return ev
}

// settleDoubt handles a replayed call: a recorded result answers it
// (done); an intent without one is a doubt its policy resolves (done when
// resolved without running); no intent means it never started.
func (x *execution) settleDoubt(ctx context.Context, led engine.EffectLedger, ev engine.Effect, c tool.Call) (tool.Result, bool) {
	prior, err := led.PriorEffects(ctx)
	if err != nil {
		return ledgerFailed(c, err), true
	}
	rec := prior[ev.Key]
	switch {
	case rec.Result != nil:
		return tool.Result{Content: rec.Result.Content, Data: rec.Result.Data, IsError: rec.Result.IsError}, true
	case rec.Intent == nil:
		if err := led.CommitEffects(ctx, nil, intent(ev, c)); err != nil {
			return ledgerFailed(c, err), true
		}
		return tool.Result{}, false
	}
	policy, rc := x.e.doubtPolicy(c.Name)
	doubt := ev
	doubt.Phase, doubt.Policy, doubt.Arguments = engine.EffectDoubt, policy, c.Arguments
	doubt.Reason = "the run was cut after this action's intent was recorded and before its result was"
	x.publish(doubt)
	resolve := func(how, why string) {
		r := ev
		r.Phase, r.Resolution, r.Reason = engine.EffectResolved, how, why
		x.publish(r)
	}
	if a, ok := x.doubts[ev.Key]; ok && policy == engine.DoubtAsk {
		switch a.how {
		case engine.ResolvedRetried:
			resolve(a.how, "retried by a person")
			return tool.Result{}, false
		case engine.ResolvedSkipped:
			resolve(a.how, "skipped by a person")
			return x.record(ctx, led, ev, tool.Result{Content: a.result}), true
		}
		resolve(engine.ResolvedFailed, "failed by a person")
		return doubtFailed(c, "a person answered fail"), true
	}
	switch policy {
	case engine.DoubtRetry:
		resolve(engine.ResolvedRetried, "retried with the same key")
		return tool.Result{}, false
	case engine.DoubtReconcile:
		r, found, err := rc.Reconcile(tool.ContextWithCall(engine.WithHost(ctx, x.host), c), c)
		switch {
		case err != nil:
			resolve(engine.ResolvedFailed, "status call failed: "+err.Error())
		case found:
			resolve(engine.ResolvedReconciled, "the status call found the effect")
			return x.record(ctx, led, ev, r), true
		default:
			resolve(engine.ResolvedAbsent, "the status call found no effect: the action runs")
			return tool.Result{}, false
		}
	default:
		resolve(engine.ResolvedFailed, "policy "+policy)
	}
	return doubtFailed(c, "its in_doubt policy is "+policy), true
}

// doubtFailed is the failed result of call c in doubt, saying why.
func doubtFailed(c tool.Call, why string) tool.Result {
	err := errdefs.Conflictf("%s (key %s) is in doubt after the run was cut, and %s: it may or may not have taken effect", c.Name, c.IdempotencyKey, why)
	return tool.Result{Content: c.Name + ": " + err.Error(), IsError: true, Err: err}
}

// record makes r the durable result of ev's call, unless the call was cut
// short (whether it took effect is then unknown).
func (x *execution) record(ctx context.Context, led engine.EffectLedger, ev engine.Effect, r tool.Result) tool.Result {
	if r.IsError && ctx.Err() != nil {
		return r
	}
	ev.Phase, ev.Content, ev.Data, ev.IsError = engine.EffectResult, r.Content, r.Data, r.IsError
	// A result the ledger could not keep (the attempt is being torn
	// down) still stands for this attempt; a later one finds the call in
	// doubt, never done twice blindly.
	_ = led.CommitEffects(ctx, nil, ev)
	return r
}

// ledgerFailed is the result of a call the ledger could not record.
func ledgerFailed(c tool.Call, err error) tool.Result {
	return tool.Result{Content: c.Name + ": not run: the effect ledger failed: " + err.Error(), IsError: true, Err: err}
}
