package config

import (
	"strings"
	"testing"
)

// TestFederationValidation: peer tools and hand-offs are checked with the
// path of the entry at fault.
func TestFederationValidation(t *testing.T) {
	const head = `
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: assistant, engine: loop, provider: p}
`
	for _, tc := range []struct{ name, agent, want string }{
		{"unknown target", `{id: desk, engine: loop, provider: p, handoffs: [billing]}`,
			`agents[1].handoffs[0]: unknown agent "billing"`},
		{"itself", `{id: desk, engine: loop, provider: p, handoffs: [desk]}`,
			`agents[1].handoffs[0]: "desk" is the agent itself`},
		{"not a loop", `{id: desk, engine: remote, peer: 'http://127.0.0.1:1/card', handoffs: [assistant]}`,
			`agents[1]: only loop agents have handoffs`},
		{"bad peer URL", `{id: desk, engine: loop, provider: p, handoffs: ['ftp://peer/card']}`,
			`agents[1].handoffs[0]: peer "ftp://peer/card": want an http or https URL`},
		{"one tool name twice", `{id: desk, engine: loop, provider: p, handoffs: ['http://a/agents/echo/card', 'http://b/agents/echo/card']}`,
			`agents[1].handoffs[1]: "http://b/agents/echo/card" and handoffs[0] are both offered as the tool transfer_to_echo`},
		{"peer tool without a card", `{id: scout, engine: loop, provider: p, peer_tools: [{name: ask}]}`,
			`agents[1].peer_tools[0].card: peer: missing`},
		{"peer tool name", `{id: scout, engine: loop, provider: p, peer_tools: [{name: 'ask me', card: /agents/a/card}]}`,
			`agents[1].peer_tools[0].name: "ask me" must be 1-64 letters`},
		{"hand-off auth to a local agent", `{id: desk, engine: loop, provider: p, handoffs: [{card: assistant, auth: {bearer_env: T}}]}`,
			`agents[1].handoffs[0].card: "assistant" is not a peer's card URL`},
		{"hand-off auth", `{id: desk, engine: loop, provider: p, handoffs: [{card: 'http://a/agents/b/card', auth: {bearer_env: T, api_key_env: K}}]}`,
			`agents[1].handoffs[0].auth: bearer_env and api_key_env are exclusive`},
		{"hand-off entry", `{id: desk, engine: loop, provider: p, handoffs: [{url: 'http://a/agents/b/card'}]}`,
			`agents[1].handoffs[0]: want an agent id, a peer's card URL or {card, auth}: json: unknown field "url"`},
		{"peer tool auth", `{id: scout, engine: loop, provider: p, peer_tools: [{name: ask, card: /agents/a/card, auth: {}}]}`,
			`agents[1].peer_tools[0].auth: want bearer_env or api_key_env`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(head+"  - "+tc.agent+"\n"), "test")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestFederationBuild: a peer tool and hand-offs become the agent's tools,
// its hand-off targets (local and remote) and its decider; a peer tool may
// also be listed in tools.
func TestFederationBuild(t *testing.T) {
	c, err := Parse([]byte(`
federation: {allow_private: true}
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: assistant, engine: loop, provider: p}
  - id: desk
    engine: loop
    provider: p
    tools: [ask]
    peer_tools: [{name: ask, card: 'http://127.0.0.1:1/agents/echo/.well-known/agent-card.json'}]
    handoffs: [assistant, 'http://127.0.0.1:1/agents/billing/.well-known/agent-card.json']
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	desk := agents[1]
	if got := strings.Join(desk.Tools, ","); got != "ask,transfer_to_assistant,transfer_to_billing" {
		t.Fatalf("tools %s", got)
	}
	if len(desk.Handoffs) != 2 || !desk.Handoffs[0].Local || desk.Handoffs[0].Engine != agents[0].Engine ||
		desk.Handoffs[1].Local || desk.Handoffs[1].Engine == nil || len(desk.Deciders) != 1 {
		t.Fatalf("handoffs %+v, deciders %d", desk.Handoffs, len(desk.Deciders))
	}
}

// TestHandoffAuthFromEnvironment: a hand-off target's credentials are read
// at start-up; a missing variable is named with the entry's path.
func TestHandoffAuthFromEnvironment(t *testing.T) {
	c, err := Parse([]byte(`
federation: {allow_private: true}
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - id: desk
    engine: loop
    provider: p
    handoffs: [{card: 'http://127.0.0.1:1/agents/billing/.well-known/agent-card.json', auth: {bearer_env: BILLING_TOKEN}}]
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "agents[0].handoffs[0].auth: environment variable BILLING_TOKEN is not set") {
		t.Fatalf("Build without the variable: %v", err)
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "secret" }})
	if err != nil || len(agents[0].Handoffs) != 1 || agents[0].Handoffs[0].Local {
		t.Fatalf("Build: %v, handoffs %+v", err, agents)
	}
}
