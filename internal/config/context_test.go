package config

import (
	"strings"
	"testing"

	"agentd/internal/errdefs"
)

func TestContextSettingsErrorsNameTheirPath(t *testing.T) {
	base := `
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: a, engine: loop, provider: p}
`
	cases := []struct{ name, yaml, want string }{
		{"window too small", strings.Replace(base, "provider: p}", "provider: p, context_window: 100}", 1), `agents[0].context_window: 100: want at least 256 tokens`},
		{"threshold over 1", strings.Replace(base, "provider: p}", "provider: p, compact_threshold: 1.5}", 1), `agents[0].compact_threshold: 1.5: want a fraction`},
		{"negative threshold", strings.Replace(base, "provider: p}", "provider: p, compact_threshold: -0.1}", 1), `agents[0].compact_threshold: -0.1`},
		{"per-model window", strings.Replace(base, "rules: [{reply: hi}]}", "rules: [{reply: hi}], models: {small: {context_window: 10}}}", 1), `providers.p.models.small.context_window: 10`},
		{"per-model typo", strings.Replace(base, "rules: [{reply: hi}]}", "rules: [{reply: hi}], models: {small: {context_windw: 1000}}}", 1), `providers.p.models.small.context_windw: unknown field`},
		{"not a loop agent", base + "  - {id: b, engine: conformance, context_window: 1000}\n", `agents[1].context_window: only the loop engine`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || !errdefs.IsValidation(err) {
				t.Fatalf("got %v\nwant a validation error containing %q", err, c.want)
			}
		})
	}
}

// TestContextSettingsResolve: the agent's values win over its model's
// entry, which wins over the provider's "*" entry.
func TestContextSettingsResolve(t *testing.T) {
	p := Provider{Models: map[string]ContextSettings{
		"big": {ContextWindow: 200_000, CompactThreshold: 0.9},
		"*":   {ContextWindow: 8_000},
	}}
	cases := []struct {
		agent Agent
		model string
		want  ContextSettings
	}{
		{Agent{}, "big", ContextSettings{ContextWindow: 200_000, CompactThreshold: 0.9}},
		{Agent{}, "other", ContextSettings{ContextWindow: 8_000}},
		{Agent{ContextSettings: ContextSettings{CompactThreshold: 0.5}}, "big", ContextSettings{ContextWindow: 200_000, CompactThreshold: 0.5}},
		{Agent{ContextSettings: ContextSettings{ContextWindow: 4_000}}, "other", ContextSettings{ContextWindow: 4_000}},
		{Agent{}, "", ContextSettings{ContextWindow: 8_000}},
	}
	for _, c := range cases {
		if got := contextSettings(c.agent, p, c.model); got != c.want {
			t.Errorf("agent %+v on %q: %+v, want %+v", c.agent.ContextSettings, c.model, got, c.want)
		}
	}
}

// TestContextWindowTooSmallForThePrompt: Build refuses an agent whose
// system prompt alone takes most of its window, naming the agent.
func TestContextWindowTooSmallForThePrompt(t *testing.T) {
	cfg, err := Parse([]byte(`
providers:
  p: {type: scripted, rules: [{reply: hi}], models: {"*": {context_window: 300}}}
agents:
  - {id: a, engine: loop, provider: p, system_prompt: '`+strings.Repeat("be brief ", 100)+`'}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), `agents[0]: loop agent "a": context_window 300: the system prompt and tools take about`) {
		t.Fatalf("Build: %v", err)
	}
}
