package tool

import (
	"context"

	"agentd/internal/errdefs"
)

// Effects says what a tool's call does outside the run, and so what an
// engine must do to run it exactly once across crashes (docs/reliability.md).
type Effects string

// The effect kinds a tool can declare.
const (
	// EffectsNone: the call changes nothing outside the run (a clock, a
	// read). It is not recorded, and runs again after a crash.
	EffectsNone Effects = "none"
	// EffectsIdempotent: running the call twice has the effect of once.
	EffectsIdempotent Effects = "idempotent"
	// EffectsKeyed: the tool takes the call's effect key
	// (Call.IdempotencyKey) and does the effect once per key.
	EffectsKeyed Effects = "keyed"
	// EffectsUnsafe: a second run may repeat the effect.
	EffectsUnsafe Effects = "unsafe"
)

// Validate refuses a kind that is none of the four (empty passes).
func (e Effects) Validate() error {
	switch e {
	case "", EffectsNone, EffectsIdempotent, EffectsKeyed, EffectsUnsafe:
		return nil
	}
	return errdefs.Validationf("effects %q: want none, idempotent, keyed or unsafe", e)
}

// Recorded reports whether calls of this kind go through the effect ledger.
func (e Effects) Recorded() bool { return e != "" && e != EffectsNone }

// EffectsOf is the kind of f's tool: Effects when declared, else none.
// The older Idempotent flag alone says a call may be replayed, which a
// call without effects may too: it does not put the tool in the ledger.
func (f Flags) EffectsOf() Effects {
	if f.Effects != "" {
		return f.Effects
	}
	return EffectsNone
}

// DefaultDoubtPolicy is the policy for a call of kind e found in doubt
// when nothing is configured: idempotent and keyed calls are retried with
// their key; an unsafe call is reconciled when its tool can tell whether
// the effect happened, else a person is asked.
func DefaultDoubtPolicy(e Effects, reconciles bool) string {
	switch {
	case e == EffectsIdempotent || e == EffectsKeyed:
		return "retry"
	case reconciles:
		return "reconcile"
	}
	return "ask"
}

// Reconciler is a tool that can say whether the effect of a call (its
// Call.IdempotencyKey, from the context) happened: found with its result,
// or not found (the call may run). An error leaves the call in doubt.
type Reconciler interface {
	Reconcile(ctx context.Context, call Call) (r Result, found bool, err error)
}

// CanReconcile reports whether t has a status call configured.
func CanReconcile(t Tool) bool {
	rc, ok := t.(Reconciler)
	if !ok {
		return false
	}
	if o, ok := t.(interface{ Reconciles() bool }); ok {
		return o.Reconciles()
	}
	return rc != nil
}
