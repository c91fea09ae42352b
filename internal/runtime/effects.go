package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// The effect ledger (engine.EffectLedger) lives in the run's own event log:
// an intent, a result, a doubt and its resolution are events of type
// "effect.<phase>", made durable by a flush of the log (with the engine's
// checkpoint, when it gives one) before CommitEffects returns. An attempt
// reads what earlier attempts recorded from the store, once.

// Event types of the effect ledger.
const (
	EventEffectIntent   = "effect.intent"
	EventEffectResult   = "effect.result"
	EventEffectDoubt    = "effect.doubt"
	EventEffectResolved = "effect.resolved"
)

// EffectTypes are the log's effect event types.
var EffectTypes = []string{EventEffectIntent, EventEffectResult, EventEffectDoubt, EventEffectResolved}

var _ engine.EffectLedger = (*host)(nil)

// effectPage is how many events PriorEffects reads at a time.
const effectPage = 1000

// effectLedger is an attempt's view of its run's ledger.
type effectLedger struct {
	once  sync.Once
	prior map[string]engine.EffectRecord
	err   error
}

// effectEvent validates an Effect and returns its log type.
func effectEvent(e engine.Effect) (string, error) {
	if e.CallID == "" || e.Tool == "" || e.Key == "" {
		return "", errdefs.Validationf("effect %s: call_id %q, tool %q and key %q are all required", e.Phase, e.CallID, e.Tool, e.Key)
	}
	switch e.Phase {
	case engine.EffectIntent, engine.EffectResult, engine.EffectDoubt, engine.EffectResolved:
		return "effect." + e.Phase, nil
	}
	return "", errdefs.Validationf("effect of call %q: phase %q: want intent, result, doubt or resolved", e.CallID, e.Phase)
}

// PriorEffects reads the effect events earlier attempts of the run logged.
func (h *host) PriorEffects(ctx context.Context) (map[string]engine.EffectRecord, error) {
	l := &h.fx
	l.once.Do(func() { l.prior, l.err = h.x.readEffects(ctx) })
	return l.prior, l.err
}

// readEffects reads the run's stored log for effect events, by key.
func (x *execution) readEffects(ctx context.Context) (map[string]engine.EffectRecord, error) {
	out := map[string]engine.EffectRecord{}
	var after int64
	for {
		page, err := x.r.st.ReadEvents(ctx, x.runID, after, effectPage)
		if err != nil {
			return nil, err
		}
		for _, ev := range page.Events {
			after = ev.Seq
			if !strings.HasPrefix(ev.Type, "effect.") {
				continue
			}
			var e engine.Effect
			if json.Unmarshal(ev.Data, &e) != nil || e.Key == "" {
				continue
			}
			rec := out[e.Key]
			switch e.Phase {
			case engine.EffectIntent:
				rec.Intent = &e
			case engine.EffectResult:
				rec.Result = &e
			}
			out[e.Key] = rec
		}
		if len(page.Events) < effectPage || after >= page.LastSeq {
			return out, nil
		}
	}
}

// CommitEffects logs evs and makes them durable, with cp in the same
// write when given. The fault hook (test-only) sees each side of it.
func (h *host) CommitEffects(ctx context.Context, cp *engine.Checkpoint, evs ...engine.Effect) error {
	point := effectPoint(evs)
	effectFault("before-" + point)
	for _, e := range evs {
		if err := h.Publish(ctx, e); err != nil {
			return err
		}
	}
	x := h.x
	var err error
	if cp != nil {
		err = h.Checkpoint(ctx, *cp)
	} else if !x.r.volatile {
		err = x.r.retry(ctx, "effect commit", x.runID, func() error { return x.log.Flush(ctx) })
	}
	if err != nil {
		return err
	}
	effectFault("after-" + point)
	return nil
}

// effectPoint names what a commit of evs records, for the fault hook:
// "intent" or "result" (the phase of its last event).
func effectPoint(evs []engine.Effect) string {
	if len(evs) == 0 {
		return "none"
	}
	return evs[len(evs)-1].Phase
}

// EffectObserver is an AttemptObserver that also counts effect events
// (telemetry: doubts by resolution).
type EffectObserver interface {
	Effect(e engine.Effect)
}

func (x *execution) observeEffect(e engine.Effect) {
	if o, ok := x.obs.(EffectObserver); ok {
		o.Effect(e)
	}
}

// effectFaultHook, when set, is called at each side of an effect commit:
// "before-intent", "after-intent", "before-result", "after-result". It is
// for fault tests only (cmd/server sets it from AGENTD_TEST_EFFECT_FAULT to
// kill its own process there); nothing else may set it.
var effectFaultHook func(point string)

// SetEffectFaultHook installs the fault tests' hook (see effectFaultHook).
// Test-only: it is set once at process start, before any run.
func SetEffectFaultHook(f func(point string)) { effectFaultHook = f }

func effectFault(point string) {
	if f := effectFaultHook; f != nil {
		f(point)
	}
}
