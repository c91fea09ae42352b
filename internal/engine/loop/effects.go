package loop

import (
	"fmt"
	"strconv"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// Effects: a turn whose calls include one with effects (tool.Effects
// idempotent, keyed or unsafe) records an intent per such call, durable
// together with a checkpoint of the turn (its assistant message and gates,
// as a settled approval payload) before any call runs; each such call's
// result is durable in the ledger before the next one runs and before the
// iteration's checkpoint. A resumed attempt therefore goes on from the
// same turn — never asking the model again for calls it already meant —
// and finds, per call, by its effect key: a result (used, not run again),
// an intent alone (in doubt: resolved by its policy), or nothing (runs).
// Hosts without an engine.EffectLedger run every call as before.

// gateEffect is how a call in doubt was resolved (persisted in the gate).
type gateEffect struct {
	// Doubt: the call was found in doubt and waits for, or got, a person's
	// answer.
	Doubt bool `json:"doubt,omitempty"`
	// Resolution is engine.Resolved*; Result the answer of a reconciled or
	// skipped call, which then does not run.
	Resolution string  `json:"resolution,omitempty"`
	Result     *string `json:"result,omitempty"`
}

// validateEffects checks the effect overrides and the doubt policies.
func (cfg *Config) validateEffects() error {
	for name, k := range cfg.Effects {
		if err := k.Validate(); err != nil {
			return errdefs.Validationf("%s: effects of tool %q: %w", cfg.who(), name, err)
		}
	}
	for name, p := range cfg.InDoubt {
		switch p {
		case engine.DoubtRetry, engine.DoubtAsk, engine.DoubtFail:
		case engine.DoubtReconcile:
			if name == "*" || cfg.Tools == nil {
				continue
			}
			if t, ok := cfg.Tools.Get(name); ok && !tool.CanReconcile(t) {
				return errdefs.Validationf("%s: in_doubt of tool %q: reconcile needs a status call, and the tool has none", cfg.who(), name)
			}
		default:
			return errdefs.Validationf("%s: in_doubt of tool %q: %q: want retry, reconcile, ask or fail", cfg.who(), name, p)
		}
	}
	return nil
}

// effectsOf is the effect kind of the tool named name (none when unknown).
func (e *Engine) effectsOf(name string) tool.Effects {
	if k, ok := e.cfg.Effects[name]; ok && k != "" {
		return k
	}
	if e.cfg.Tools == nil {
		return tool.EffectsNone
	}
	t, ok := e.cfg.Tools.Get(name)
	if !ok {
		return tool.EffectsNone
	}
	return t.Flags().EffectsOf()
}

// doubtPolicy is the policy for a call of tool name found in doubt.
func (e *Engine) doubtPolicy(name string) string {
	if p, ok := e.cfg.InDoubt[name]; ok {
		return p
	}
	reconciles := false
	if e.cfg.Tools != nil {
		t, ok := e.cfg.Tools.Get(name)
		reconciles = ok && tool.CanReconcile(t)
	}
	if p, ok := e.cfg.InDoubt["*"]; ok && (p != engine.DoubtReconcile || reconciles) {
		return p
	}
	return tool.DefaultDoubtPolicy(e.effectsOf(name), reconciles)
}

// mayAskDoubt reports whether a call in doubt may wait for a person.
func (e *Engine) mayAskDoubt() bool {
	for _, name := range e.cfg.ToolNames {
		if e.effectsOf(name).Recorded() && e.doubtPolicy(name) == engine.DoubtAsk {
			return true
		}
	}
	return false
}

// ledger is the host's effect ledger, nil when it keeps none.
func (x *execution) ledger() engine.EffectLedger {
	l, _ := x.host.(engine.EffectLedger)
	return l
}

// recorded reports whether gate g's call goes through the ledger.
func (x *execution) recorded(g gate) bool {
	if g.Outcome != gateRun || g.forbidden || x.ledger() == nil {
		return false
	}
	if _, ok := x.client[g.Call.Name]; ok && !x.e.allowed[g.Call.Name] {
		return false // the client runs it
	}
	return x.e.effectsOf(g.Call.Name).Recorded()
}

// effectKey is the key of g's call in iteration n: its position is the
// iteration and the call's id, which the checkpointed turn keeps (a turn
// asked of the model again after a crash had no intent recorded).
func (x *execution) effectKey(n int, g gate) (key, digest string) {
	digest = engine.ArgsDigest(g.Call.Arguments)
	pos := "iter:" + strconv.Itoa(n) + "/call:" + g.Call.ID
	return engine.EffectKey(x.run.ID, pos, digest), digest
}

// callKey is the key a tool receives for call c of iteration n: the
// effect key when its tool has effects, else IdempotencyKey.
func (x *execution) callKey(n int, c model.ToolCall) string {
	if g := (gate{Call: c, Outcome: gateRun}); x.recorded(g) {
		key, _ := x.effectKey(n, g)
		return key
	}
	return IdempotencyKey(x.run.ID, n, c.ID)
}

// prior is what earlier attempts recorded; nothing for a fresh run.
func (x *execution) prior() (map[string]engine.EffectRecord, error) {
	led := x.ledger()
	_, resumed := engine.ResumeContextFromContext(x.ctx)
	if led == nil || !resumed && x.run.ResumeFrom == nil {
		return nil, nil
	}
	p, err := led.PriorEffects(x.ctx)
	if err != nil {
		return nil, fmt.Errorf("loop agent %q: reading the effect ledger: %w", x.actor, err)
	}
	return p, nil
}

// effect is the Effect event of gate g (the i-th call of iteration n).
func (x *execution) effect(phase string, n int, g gate) engine.Effect {
	key, digest := x.effectKey(n, g)
	return engine.Effect{Phase: phase, Actor: x.actor, CallID: g.Call.ID, Tool: g.Call.Name, Key: key,
		Digest: digest, Effects: string(x.e.effectsOf(g.Call.Name))}
}

// intend records the intents of p's calls with effects that no earlier
// attempt recorded, durable with a checkpoint of the turn, before any runs.
func (x *execution) intend(n int, p *pending) error {
	prior, err := x.prior()
	if err != nil {
		return err
	}
	var evs []engine.Effect
	for _, g := range p.Gates {
		if !x.recorded(g) || g.Effect != nil && g.Effect.Result != nil {
			continue
		}
		ev := x.effect(engine.EffectIntent, n, g)
		if _, seen := prior[ev.Key]; seen {
			continue
		}
		ev.Arguments = g.Call.Arguments
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		return nil
	}
	cp, err := x.snapshot(n, &checkpointPayload{Approval: p})
	if err != nil {
		return err
	}
	if err := x.ledger().CommitEffects(x.ctx, &cp, evs...); err != nil {
		return fmt.Errorf("loop agent %q: recording the intent of iteration %d's tool calls: %w", x.actor, n, err)
	}
	return nil
}

// hasRecorded reports whether one of gates goes through the ledger.
func (x *execution) hasRecorded(gates []gate) bool {
	for _, g := range gates {
		if x.recorded(g) {
			return true
		}
	}
	return false
}

// runEffect runs the i-th call of iteration n through the ledger: a result
// an earlier attempt recorded is used as it is; a result a doubt's
// resolution gave is recorded; otherwise the call runs with its effect key
// and its result is durable before this returns.
func (x *execution) runEffect(n int, g gate, call tool.Call, prior map[string]engine.EffectRecord) (tool.Result, error) {
	ev := x.effect(engine.EffectResult, n, g)
	call.IdempotencyKey = ev.Key
	if rec, ok := prior[ev.Key]; ok && rec.Result != nil {
		return tool.Result{Content: rec.Result.Content, IsError: rec.Result.IsError}, nil
	}
	var r tool.Result
	if fx := g.Effect; fx != nil && fx.Result != nil {
		r = tool.Text(*fx.Result)
	} else {
		ctx := engine.WithRunID(engine.WithHost(&x.work, x.host), x.run.ID)
		r = x.e.cfg.Tools.Execute(ctx, call)
		if parks(r) || r.IsError && x.stopped() != nil {
			// Parked (it goes on when the run resumes, with its key) or
			// cut short (whether the effect happened is unknown): no
			// result is recorded.
			return r, nil
		}
	}
	ev.Content, ev.IsError = r.Content, r.IsError
	if err := x.ledger().CommitEffects(x.ctx, nil, ev); err != nil {
		return r, fmt.Errorf("loop agent %q: recording the result of call %s (%s): %w", x.actor, call.ID, call.Name, err)
	}
	return r, nil
}

// runRecorded runs a turn's dispatched calls one at a time, in order,
// those with effects through the ledger (runEffect): a result must be
// durable before the next call runs, so they do not run concurrently.
// An error is a result the ledger could not keep: the run stops.
func (x *execution) runRecorded(n int, gates []gate, dispatch []tool.Call, at []int, results []tool.Result) error {
	prior, err := x.prior()
	if err != nil {
		return &ledgerError{err}
	}
	ctx := engine.WithRunID(engine.WithHost(&x.work, x.host), x.run.ID)
	for j, call := range dispatch {
		i := at[j]
		if !x.recorded(gates[i]) {
			results[i] = x.e.cfg.Tools.Execute(ctx, call)
			continue
		}
		r, err := x.runEffect(n, gates[i], call, prior)
		if err != nil {
			return &ledgerError{err}
		}
		results[i] = r
	}
	return nil
}

// ledgerError is a failure to read or write the effect ledger while a
// turn's calls run: the run stops without a checkpoint, so a later attempt
// settles the turn again from its intents.
type ledgerError struct{ err error }

func (e *ledgerError) Error() string { return e.err.Error() }
func (e *ledgerError) Unwrap() error { return e.err }
