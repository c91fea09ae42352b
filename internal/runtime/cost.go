package runtime

import (
	"maps"

	"agentd/internal/model"
)

// A run's cost is its token usage by model (run.Task.ModelUsage, which
// the host accumulates as the engine reports each model call) priced with
// the configuration's prices when it is read: the run view and the
// trajectory show the same total without reading the run's event log.

// addModelUsage adds u to byModel's count of modelName, allocating the map
// on first use.
func addModelUsage(byModel map[string]model.TokenUsage, modelName string, u model.TokenUsage) map[string]model.TokenUsage {
	if byModel == nil {
		byModel = map[string]model.TokenUsage{}
	}
	byModel[modelName] = byModel[modelName].Add(u)
	return byModel
}

// mergeModelUsage returns a new map of a's counts plus b's (nil when both
// are empty); neither is changed, so a task copied before the merge keeps
// its own.
func mergeModelUsage(a, b map[string]model.TokenUsage) map[string]model.TokenUsage {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	for name, u := range b {
		out = addModelUsage(out, name, u)
	}
	return out
}

// Cost prices usage by model: the total of the models that have a price
// (nil when none has, or no prices are configured) and, sorted, the names
// of those that have none — so a partial cost is never mistaken for the
// whole. Models whose calls counted no tokens cost nothing either way.
func (r *Runtime) Cost(byModel map[string]model.TokenUsage) (cost *float64, unpriced []string) {
	if len(r.prices) == 0 {
		return nil, nil
	}
	var total float64
	var room [1]string
	for _, name := range model.ModelNames(room[:0], byModel) {
		u := byModel[name]
		if u.InputTokens+u.OutputTokens == 0 {
			continue
		}
		p, ok := r.prices[name]
		if !ok {
			unpriced = append(unpriced, name)
			continue
		}
		total += p.cost(u.InputTokens, u.OutputTokens)
		cost = &total
	}
	return cost, unpriced
}

// spent is what usage by model cost, 0 when nothing of it is priced.
func (r *Runtime) spent(byModel map[string]model.TokenUsage) float64 {
	if cost, _ := r.Cost(byModel); cost != nil {
		return *cost
	}
	return 0
}
