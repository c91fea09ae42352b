package config

import (
	"fmt"
	"maps"
	"slices"

	"agentd/internal/runtime"
)

// Price is what a model's tokens cost, per million, in the unit the
// operator chooses (the same for every model: costs are added up).
type Price struct {
	InputPerMillion  float64 `json:"input_per_million"`
	OutputPerMillion float64 `json:"output_per_million"`
}

// validatePrices checks the prices by model name.
func validatePrices(prices map[string]Price) error {
	for _, name := range slices.Sorted(maps.Keys(prices)) {
		p := prices[name]
		if name == "" {
			return fmt.Errorf("prices: a model name is required")
		}
		if p.InputPerMillion < 0 {
			return fmt.Errorf("prices.%s.input_per_million: %g must not be negative", name, p.InputPerMillion)
		}
		if p.OutputPerMillion < 0 {
			return fmt.Errorf("prices.%s.output_per_million: %g must not be negative", name, p.OutputPerMillion)
		}
	}
	return nil
}

// RuntimePrices are the prices as the runtime takes them (nil: none).
func (c *Config) RuntimePrices() map[string]runtime.Price {
	if len(c.Prices) == 0 {
		return nil
	}
	out := make(map[string]runtime.Price, len(c.Prices))
	for name, p := range c.Prices {
		out[name] = runtime.Price{InputPerMillion: p.InputPerMillion, OutputPerMillion: p.OutputPerMillion}
	}
	return out
}
