package telemetry

import (
	"agentd/internal/engine"
	"agentd/internal/runtime"
)

var _ runtime.EffectObserver = (*attempt)(nil)

// Effect counts a tool call's doubt: once when found ("found") and once
// when resolved, by resolution.
func (a *attempt) Effect(e engine.Effect) {
	switch e.Phase {
	case engine.EffectDoubt:
		a.o.m.EffectDoubt("found")
	case engine.EffectResolved:
		a.o.m.EffectDoubt(e.Resolution)
	}
}

// EffectDoubt counts a doubt found or resolved (resolution).
func (m *Metrics) EffectDoubt(resolution string) {
	if m != nil {
		m.doubts.WithLabelValues(resolution).Inc()
	}
}
