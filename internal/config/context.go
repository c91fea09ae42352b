package config

import (
	"fmt"
	"sort"
)

// ContextSettings size a loop agent's requests against its model's
// context window (engine/loop, context.go): when a request would fill
// more than compact_threshold of context_window tokens, old tool results
// are elided and the oldest history is summarised by the model.
//
// They may be given per model, under the provider's models, and per
// agent, which overrides its model's; unset values default to a 128,000
// token window and a threshold of 0.8.
type ContextSettings struct {
	// ContextWindow is the model's window in tokens (at least 256).
	ContextWindow int `json:"context_window,omitempty"`
	// CompactThreshold is the fraction of the window, in (0, 1], a request
	// may fill before its history is compacted.
	CompactThreshold float64 `json:"compact_threshold,omitempty"`
	// SchemaInPrompt marks a model that takes no response_format: an
	// agent's response schema goes into its system prompt instead.
	SchemaInPrompt bool `json:"schema_in_prompt,omitempty"`
}

// minContextWindow mirrors the loop engine's smallest window.
const minContextWindow = 256

// validate checks s at path (agents[0], providers.x.models.y).
func (s ContextSettings) validate(path string) error {
	if s.ContextWindow < 0 || s.ContextWindow > 0 && s.ContextWindow < minContextWindow {
		return fmt.Errorf("%s.context_window: %d: want at least %d tokens", path, s.ContextWindow, minContextWindow)
	}
	if s.CompactThreshold < 0 || s.CompactThreshold > 1 {
		return fmt.Errorf("%s.compact_threshold: %v: want a fraction of the context window in (0, 1]", path, s.CompactThreshold)
	}
	return nil
}

// set reports whether any setting is given.
func (s ContextSettings) set() bool { return s != ContextSettings{} }

// validateModels checks a provider's per-model settings.
func (p Provider) validateModels(path string) error {
	names := make([]string, 0, len(p.Models))
	for name := range p.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" {
			return fmt.Errorf("%s.models: a model name must not be empty", path)
		}
		if err := p.Models[name].validate(path + ".models." + name); err != nil {
			return err
		}
	}
	return nil
}

// validateContext checks an agent's settings; only loop agents have them.
func (a Agent) validateContext(path string) error {
	if a.Engine != "loop" && a.ContextSettings.set() {
		return fmt.Errorf("%s.context_window: only the loop engine sizes its context (engine is %q)", path, a.Engine)
	}
	return a.ContextSettings.validate(path)
}

// contextSettings resolves the settings of agent a on model of provider
// p: each value the agent gives, else its model's entry (the entry "*"
// for a model without its own), else the engine default (zero).
func contextSettings(a Agent, p Provider, model string) ContextSettings {
	s, ok := p.Models[model]
	if !ok {
		s = p.Models["*"]
	}
	if a.ContextWindow != 0 {
		s.ContextWindow = a.ContextWindow
	}
	if a.CompactThreshold != 0 {
		s.CompactThreshold = a.CompactThreshold
	}
	s.SchemaInPrompt = s.SchemaInPrompt || a.SchemaInPrompt
	return s
}
