package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/strictjson"
)

// AssistantOverrides is what an assistant (a stored, versioned
// configuration of an agent; see runtime's assistants.go) may change of a
// loop agent: the members of the agent's own entry in the file of the
// same names. Everything else (provider, budgets, guards, tool settings)
// stays the file's.
type AssistantOverrides struct {
	Model        string   `json:"model,omitempty"`
	SystemPrompt *string  `json:"system_prompt,omitempty"`
	Temperature  *float64 `json:"temperature,omitempty"`
	TopP         *float64 `json:"top_p,omitempty"`
	MaxTokens    int      `json:"max_tokens,omitempty"`
	// Tools, when set, is the subset of the agent's tools the assistant's
	// runs are offered (an empty list: none).
	Tools          *[]string       `json:"tools,omitempty"`
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
}

// configurer returns the Configure function of the runtime's agent a: nil
// for engines other than loop, whose assistants override nothing.
func (b *builder) configurer(a Agent) func(field string, overrides map[string]any) (engine.Engine, error) {
	if a.Engine != "loop" {
		return nil
	}
	return func(field string, overrides map[string]any) (engine.Engine, error) {
		// The builder's maps were filled by Build; this only reads them,
		// but a lock keeps two checks from racing over a lazy provider.
		b.configuring.Lock()
		defer b.configuring.Unlock()
		o, err := decodeOverrides(field, overrides)
		if err != nil {
			return nil, err
		}
		configured, err := b.applyOverrides(field, a, o) // a copy: a stays the file's
		if err != nil {
			return nil, err
		}
		return b.loop(field, configured)
	}
}

// decodeOverrides decodes overrides strictly, as the file is decoded: an
// unknown or misspelt member is an error naming it under field.
func decodeOverrides(field string, overrides map[string]any) (AssistantOverrides, error) {
	var o AssistantOverrides
	doc, err := json.Marshal(overrides)
	if err != nil {
		return o, fmt.Errorf("%s: %v", field, err)
	}
	if err := strictjson.Decode(doc, &o); err != nil {
		var pe *strictjson.PathError
		if errors.As(err, &pe) && pe.Path != "" {
			return o, fmt.Errorf("%s.%s: %s", field, pe.Path, pe.Msg)
		}
		return o, fmt.Errorf("%s: %v", field, err)
	}
	return o, nil
}

// applyOverrides returns agent a with o applied, checked with the file's
// own rules (validateSampling) and messages, under field instead of
// agents[i].
func (b *builder) applyOverrides(field string, a Agent, o AssistantOverrides) (Agent, error) {
	if o.Model != "" {
		a.Model = o.Model
	}
	if o.SystemPrompt != nil {
		a.SystemPrompt = *o.SystemPrompt
	}
	if o.Temperature != nil {
		a.Temperature = o.Temperature
	}
	if o.TopP != nil {
		a.TopP = o.TopP
	}
	if o.MaxTokens != 0 {
		a.MaxTokens = o.MaxTokens
	}
	if len(o.ResponseSchema) > 0 {
		a.ResponseSchema = o.ResponseSchema
	}
	if err := a.validateSampling(field); err != nil {
		return a, err
	}
	if o.Tools != nil {
		return b.subsetTools(field, a, *o.Tools)
	}
	return a, nil
}

// subsetTools returns a offered only the tools keep names, each one of
// those a offers (its tools, peer tools, hand-offs and MCP servers' tools,
// less its disallowed tools): the others become disallowed, and their
// settings go with them.
func (b *builder) subsetTools(field string, a Agent, keep []string) (Agent, error) {
	offered, err := b.federationTools(field, a)
	if err == nil {
		offered, err = b.mcpTools(field, a, offered)
	}
	if err != nil {
		return a, err
	}
	offered = slices.DeleteFunc(offered, func(t string) bool { return slices.Contains(a.DisallowedTools, t) })
	for j, t := range keep {
		if !slices.Contains(offered, t) {
			return a, fmt.Errorf("%s.tools[%d]: unknown tool %q (agent %q offers: %s)", field, j, t, a.ID, strings.Join(offered, ", "))
		}
		if slices.Contains(keep[:j], t) {
			return a, fmt.Errorf("%s.tools[%d]: %q listed twice", field, j, t)
		}
	}
	a.DisallowedTools = slices.Clone(a.DisallowedTools)
	a.ToolSettings = maps.Clone(a.ToolSettings)
	for _, t := range offered {
		if !slices.Contains(keep, t) {
			a.DisallowedTools = append(a.DisallowedTools, t)
			delete(a.ToolSettings, t)
		}
	}
	return a, nil
}
