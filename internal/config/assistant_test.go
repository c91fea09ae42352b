package config

import (
	"strings"
	"testing"

	"agentd/internal/runtime"
)

// demoAgents builds the demo configuration's agents, by id.
func demoAgents(t *testing.T) map[string]*runtime.Agent {
	t.Helper()
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*runtime.Agent{}
	for _, a := range agents {
		out[a.ID] = a
	}
	return out
}

// TestAssistantOverridesRefused: what an assistant may not override is
// refused with the file's own message, under context instead of
// agents[i]; the file's refusal of the same value is checked beside it.
func TestAssistantOverridesRefused(t *testing.T) {
	configure := demoAgents(t)["assistant"].Configure
	for _, c := range []struct {
		name      string
		overrides map[string]any
		want      string
		file      string // the same mistake in the file, "" when it has no twin
	}{
		{"misspelt member", map[string]any{"modle": "x"}, `context.modle: unknown field (did you mean "model"?)`, "modle: x"},
		{"a member the file has but an assistant may not set", map[string]any{"provider": "x"}, "context.provider: unknown field", ""},
		{"temperature", map[string]any{"temperature": 5}, "context.temperature: want 0 to 2, got 5", "temperature: 5"},
		{"top_p", map[string]any{"top_p": 0}, "context.top_p: want more than 0 and at most 1, got 0", "top_p: 0"},
		{"max_tokens", map[string]any{"max_tokens": -1}, "context.max_tokens: must not be negative, got -1", "max_tokens: -1"},
		{"wrong type", map[string]any{"system_prompt": 3}, "context.system_prompt: ", "system_prompt: 3"},
		{"a tool the agent lacks", map[string]any{"tools": []any{"clock", "shell"}}, `context.tools[1]: unknown tool "shell"`, ""},
		{"a tool twice", map[string]any{"tools": []any{"clock", "clock"}}, `context.tools[1]: "clock" listed twice`, ""},
		{"a schema that is not one", map[string]any{"response_schema": map[string]any{"type": 3}}, "context.response_schema", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := configure("context", c.overrides)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Configure = %v, want %q…", err, c.want)
			}
			if c.file == "" {
				return
			}
			yaml := strings.Replace(string(demoYAML), "    provider: echo-script\n", "    provider: echo-script\n    "+c.file+"\n", 1)
			_, ferr := Parse([]byte(yaml), "f")
			if rest := strings.TrimPrefix(err.Error(), "context."); ferr == nil || !strings.Contains(ferr.Error(), "."+rest) {
				t.Fatalf("the file says %v; the assistant %q", ferr, err)
			}
		})
	}
}

// TestAssistantOverridesApplied: a valid override builds an engine and
// leaves the agent as the file says; agents of other engines take none.
func TestAssistantOverridesApplied(t *testing.T) {
	agents := demoAgents(t)
	a := agents["assistant"]
	eng, err := a.Configure("context", map[string]any{
		"model": "m", "system_prompt": "p", "temperature": 0.5, "top_p": 0.9, "max_tokens": 100,
		"tools": []any{"clock"}, "response_schema": map[string]any{"type": "object"},
	})
	if err != nil || eng == nil || eng == a.Engine {
		t.Fatalf("Configure = %v, %v", eng, err)
	}
	if agents["refund"].Configure != nil || agents["research"].Configure != nil {
		t.Fatal("a flow or graph agent takes overrides")
	}
}
