package config

import (
	"strings"
	"testing"

	"agentd/internal/engine/remote"
)

func TestRemoteAgents(t *testing.T) {
	const head = "providers: {}\nagents:\n  - id: r\n"
	for _, c := range []struct {
		name, agent, env, err string
	}{
		{"absolute peer", "    engine: remote\n    peer: https://peer.example/.well-known/agent-card.json\n", "", ""},
		{"peer on this server", "    engine: remote\n    peer: /agents/echo/.well-known/agent-card.json\n", "", ""},
		{"bearer from the environment", "    engine: remote\n    peer: https://p.example/card\n    auth: {bearer_env: PEER_TOKEN}\n", "PEER_TOKEN", ""},
		{"api key from the environment", "    engine: remote\n    peer: https://p.example/card\n    auth: {api_key_env: PEER_KEY, header: X-Key}\n", "PEER_KEY", ""},
		{"missing peer", "    engine: remote\n", "", "agents[0].peer: missing"},
		{"not http", "    engine: remote\n    peer: ftp://p.example/card\n", "", "agents[0].peer \"ftp://p.example/card\": want an http or https URL"},
		{"secret unset", "    engine: remote\n    peer: https://p.example/card\n    auth: {bearer_env: PEER_TOKEN}\n", "", "agents[0].auth: environment variable PEER_TOKEN is not set"},
		{"two secrets", "    engine: remote\n    peer: https://p.example/card\n    auth: {bearer_env: A, api_key_env: B}\n", "", "agents[0].auth: bearer_env and api_key_env are exclusive"},
		{"peer on a loop agent", "    engine: conformance\n    peer: https://p.example/card\n", "", "agents[0].peer: only the remote engine has a peer"},
		{"unknown auth key", "    engine: remote\n    peer: https://p.example/card\n    auth: {token: x}\n", "", "token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(head+c.agent), "test.yaml")
			if err == nil {
				_, err = cfg.Build(BuildOptions{Getenv: func(k string) string {
					if k == c.env {
						return "secret"
					}
					return ""
				}})
			}
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want it to say %q", err, c.err)
			}
		})
	}
}

func TestDemoRelayIsRemote(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Federation.AllowPrivate {
		t.Fatal("the demo's relay needs federation.allow_private")
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }, SelfURL: func() string { return "http://127.0.0.1:8080" }})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if a.ID == "relay" {
			if _, ok := a.Engine.(*remote.Engine); !ok {
				t.Fatalf("relay's engine is %T", a.Engine)
			}
			return
		}
	}
	t.Fatal("no relay agent in the demo")
}
