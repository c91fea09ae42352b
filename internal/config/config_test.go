package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentd/internal/errdefs"
)

func TestDemoConfigBuilds(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range agents {
		ids = append(ids, a.ID)
		if a.Card.Version == "" || len(a.Card.Skills) == 0 {
			t.Errorf("agent %s: card needs a version and skills: %+v", a.ID, a.Card)
		}
	}
	if strings.Join(ids, ",") != "echo,assistant,conformance,refund,research,team,relay,scout,desk,guarded,goal" {
		t.Fatalf("demo agents %v", ids)
	}
}

func TestOpenAISwitchReadsTheEnvironment(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "m"}
	if _, err := c.Build(BuildOptions{Getenv: func(k string) string { return env[k] }}); err != nil {
		t.Fatal(err)
	}
}

func TestErrorsNameTheirPath(t *testing.T) {
	base := `
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: a, engine: loop, provider: p}
`
	cases := []struct{ name, yaml, want string }{
		{"typo in a key", strings.Replace(base, "provider: p}", "provider: p, modle: x}", 1), `agents[0].modle: unknown field (did you mean "model"?)`},
		{"key given twice", strings.Replace(base, "providers:\n", "providers:\n  p: {type: scripted, rules: [{reply: ho}]}\n", 1), `line 4: key "p" already set in map`},
		{"unknown tool", strings.Replace(base, "provider: p}", "provider: p, tools: [clok]}", 1), `agents[0].tools[0]: unknown tool "clok"`},
		{"dangling provider", strings.Replace(base, "provider: p}", "provider: q}", 1), `agents[0].provider: unknown provider "q"`},
		{"unknown engine", strings.Replace(base, "engine: loop", "engine: graphh", 1), `agents[0].engine: unknown engine "graphh"`},
		{"duplicate agent", base + "  - {id: a, engine: loop, provider: p}\n", `agents[1].id: "a" is already used by agents[0]`},
		{"bad agent id", strings.Replace(base, "id: a,", "id: A B,", 1), `agents[0].id: "A B"`},
		{"bad regexp", strings.Replace(base, "{reply: hi}", "{match: '(', reply: hi}", 1), `providers.p.rules[0].match`},
		{"unknown provider type", strings.Replace(base, "type: scripted", "type: scriptd", 1), `providers.p.type: unknown provider type "scriptd"`},
		{"bad multitask", strings.Replace(base, "provider: p}", "provider: p, multitask: queue}", 1), `agents[0].multitask: unknown policy "queue"`},
		{"bad duration", "server: {heartbeat: soon}\n" + base, `invalid duration "soon"`},
		{"unknown default agent", "server: {default_agent: zz}\n" + base, `server.default_agent: unknown agent "zz"`},
		{"skill without tags", strings.Replace(base, "provider: p}", "provider: p, skills: [{id: s, name: S}]}", 1), `agents[0].skills[0].tags`},
		{"no agents", "providers: {}\n", "agents: at least one agent is required"},
		{"not yaml", "agents: [", "not valid YAML"},
		{"unknown top-level key", "agent: []\n" + base, `agent: unknown field (did you mean "agents"?)`},
		{"temperature out of range", strings.Replace(base, "provider: p}", "provider: p, temperature: 3}", 1), `agents[0].temperature: want 0 to 2, got 3`},
		{"top_p out of range", strings.Replace(base, "provider: p}", "provider: p, top_p: 0}", 1), `agents[0].top_p`},
		{"negative turn timeout", strings.Replace(base, "provider: p}", "provider: p, turn_timeout: -1s}", 1), `invalid duration "-1s"`},
		{"http_get not configured", strings.Replace(base, "provider: p}", "provider: p, tools: [http_get]}", 1), `agents[0].tools[0]: unknown tool "http_get"`},
		{"bad response schema", strings.Replace(base, "provider: p}", "provider: p, response_schema: {type: 7}}", 1), `agents[0].response_schema: invalid schema`},
		{"negative push timeout", "push: {timeout: -1s}\n" + base, `push.timeout: invalid duration "-1s"`},
		{"zero push claim_ttl", "push: {claim_ttl: 0s}\n" + base, `push.claim_ttl: must be positive, got "0s" (leave it out for the default 5s)`},
		{"push retry_for not a duration", "push: {retry_for: soon}\n" + base, `push.retry_for: invalid duration "soon"`},
		{"push claim_ttl too short", "push: {claim_ttl: 100ms}\n" + base, `push.claim_ttl: 100ms is too short, want at least 1s`},
		{"push timeout a number", "push: {timeout: 10}\n" + base, `push.timeout: want a duration string`},
		{"period budget without a period", strings.Replace(base, "provider: p}", "provider: p, budget: {max_tokens_per_period: 100}}", 1), `agents[0].budget.period: required with max_tokens_per_period`},
		{"period without a budget", strings.Replace(base, "provider: p}", "provider: p, budget: {period: 24h}}", 1), `agents[0].budget.max_tokens_per_period: required with period 24h0m0s`},
		{"period too short", strings.Replace(base, "provider: p}", "provider: p, budget: {period: 30s, max_tokens_per_period: 1}}", 1), `agents[0].budget.period: 30s must be at least 1m`},
		{"negative period budget", strings.Replace(base, "provider: p}", "provider: p, budget: {period: 1h, max_tokens_per_period: -1}}", 1), `agents[0].budget.max_tokens_per_period: -1 must not be negative`},
		{"child share over the whole", strings.Replace(base, "provider: p}", "provider: p, budget: {max_tokens_per_run: 9, child_share: 1.5}}", 1), `agents[0].budget.child_share: 1.5 is not a part of the budget`},
		{"negative price", "prices: {gpt-x: {input_per_million: -1, output_per_million: 2}}\n" + base, `prices.gpt-x.input_per_million: -1 must not be negative`},
		{"revise without a judge", strings.Replace(base, "provider: p}", "provider: p, revise: {max_revisions: 1}}", 1), `agents[0].revise.judge: the judge's provider is required`},
		{"revise with an unknown judge", strings.Replace(base, "provider: p}", "provider: p, revise: {judge: q, max_revisions: 1}}", 1), `agents[0].revise.judge: unknown provider "q"`},
		{"revise without revisions", strings.Replace(base, "provider: p}", "provider: p, revise: {judge: p}}", 1), `agents[0].revise.max_revisions: want 1 to 10, got 0`},
		{"unknown disallowed tool", strings.Replace(base, "provider: p}", "provider: p, disallowed_tools: [clok]}", 1), `agents[0].disallowed_tools[0]: unknown tool "clok"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, c.want)
			}
			if !errdefs.IsValidation(err) || !strings.HasPrefix(err.Error(), "test.yaml: ") {
				t.Fatalf("error %q must be a validation error prefixed with the file name", err)
			}
		})
	}
}

func TestLoadFileAndDefaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agentd.yaml")
	if err := os.WriteFile(path, []byte(`
server: {addr: "127.0.0.1:9999", heartbeat: 2s}
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: a, engine: loop, provider: p}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Addr != "127.0.0.1:9999" || c.Server.Heartbeat.Or(time.Minute) != 2*time.Second || c.Server.CancelGrace.Or(5*time.Second) != 5*time.Second {
		t.Fatalf("server %+v", c.Server)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

// The loop's settings and the http_get tool are reachable from the file.
func TestLoopSettingsFromTheFile(t *testing.T) {
	cfg, err := Parse([]byte(`
tools:
  http_get: {allow_hosts: [example.com], timeout: 2s}
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - id: a
    engine: loop
    provider: p
    tools: [http_get, calculator]
    disallowed_tools: [calculator]
    temperature: 0.3
    top_p: 0.8
    max_tokens: 100
    timeout: 1m
    turn_timeout: 20s
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := cfg.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if a := agents[0]; a.Timeout != time.Minute {
		t.Errorf("timeout %v, want 1m", a.Timeout)
	}
	if a := cfg.Agents[0]; *a.Temperature != 0.3 || *a.TopP != 0.8 || a.MaxTokens != 100 || time.Duration(a.TurnTimeout) != 20*time.Second {
		t.Errorf("agent settings %+v", a)
	}
}

// A revise loop in the configuration becomes the agent's judge decider and
// its bound on attempts.
func TestReviseBuilds(t *testing.T) {
	c, err := Parse([]byte("providers:\n  p: {type: scripted, rules: [{reply: hi}]}\n  j: {type: scripted, rules: [{reply: ACCEPT}]}\nagents:\n  - {id: a, engine: loop, provider: p, revise: {judge: j, max_revisions: 3}}\n  - {id: b, engine: loop, provider: p}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if a := agents[0]; a.MaxRevise != 4 || len(a.Deciders) != 1 {
		t.Fatalf("agent a: max revise %d, %d deciders; want 4 attempts and the judge", a.MaxRevise, len(a.Deciders))
	}
	if b := agents[1]; b.MaxRevise != 0 || len(b.Deciders) != 0 {
		t.Fatalf("agent b: max revise %d, %d deciders; want none", b.MaxRevise, len(b.Deciders))
	}
}
