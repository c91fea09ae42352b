package runtime

import (
	"math"
	"slices"
	"testing"

	"agentd/internal/model"
)

// Cost prices each model's tokens at its price, adds them up, and names
// the models without a price rather than pricing them at zero.
func TestCost(t *testing.T) {
	r := &Runtime{prices: map[string]Price{
		"small": {InputPerMillion: 1, OutputPerMillion: 4},
		"large": {InputPerMillion: 10, OutputPerMillion: 30},
	}}
	byModel := map[string]model.TokenUsage{
		"small": {InputTokens: 1_000_000, OutputTokens: 500_000},
		"large": {InputTokens: 2000, OutputTokens: 1000},
		"local": {InputTokens: 10, OutputTokens: 10},
		"":      {InputTokens: 5},
		"idle":  {},
	}
	cost, unpriced := r.Cost(byModel)
	if want := 1 + 2 + 0.02 + 0.03; cost == nil || math.Abs(*cost-want) > 1e-12 {
		t.Fatalf("cost %v, want %g", cost, want)
	}
	if !slices.Equal(unpriced, []string{"", "local"}) {
		t.Fatalf("unpriced %q, want the unnamed model and local (idle called for no tokens)", unpriced)
	}
	if cost, unpriced := r.Cost(map[string]model.TokenUsage{"local": {InputTokens: 1}}); cost != nil || len(unpriced) != 1 {
		t.Fatalf("nothing priced: cost %v, unpriced %q; want no cost", cost, unpriced)
	}
	if cost, unpriced := (&Runtime{}).Cost(byModel); cost != nil || unpriced != nil {
		t.Fatalf("no prices configured: cost %v, unpriced %q; want neither", cost, unpriced)
	}
}

// mergeModelUsage adds up by model and leaves both inputs as they were:
// a task copied before an attempt's totals are folded in keeps its own.
func TestMergeModelUsage(t *testing.T) {
	a := map[string]model.TokenUsage{"m": {InputTokens: 1, OutputTokens: 1, TotalTokens: 2}}
	b := addModelUsage(nil, "m", model.TokenUsage{InputTokens: 2, OutputTokens: 3})
	b = addModelUsage(b, "n", model.TokenUsage{InputTokens: 4})
	got := mergeModelUsage(a, b)
	want := map[string]model.TokenUsage{"m": {InputTokens: 3, OutputTokens: 4, TotalTokens: 7}, "n": {InputTokens: 4, TotalTokens: 4}}
	if len(got) != len(want) || got["m"] != want["m"] || got["n"] != want["n"] {
		t.Fatalf("merged %+v, want %+v", got, want)
	}
	if a["m"].TotalTokens != 2 || len(a) != 1 {
		t.Fatalf("the first map changed: %+v", a)
	}
	if mergeModelUsage(nil, nil) != nil {
		t.Fatal("two empty maps merged into a non-nil one")
	}
}
