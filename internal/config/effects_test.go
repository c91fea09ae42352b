package config

import (
	"strings"
	"testing"
)

// tools.http, tools.effects and in_doubt: errors name their path; a valid
// file builds the HTTP tool for the agent, with the agent's policy.
func TestEffectsConfig(t *testing.T) {
	base := `
providers:
  p: {type: scripted, rules: [{reply: hi}]}
tools:
  http:
    - {name: charge, url: "http://127.0.0.1:1/charge", effects: keyed, status_url: "http://127.0.0.1:1/c/{key}"}
  effects:
    calculator: {effects: none}
agents:
  - {id: a, engine: loop, provider: p, tools: [charge], in_doubt: {charge: reconcile}}
`
	if _, err := Parse([]byte(base), "test.yaml"); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	cases := []struct{ name, from, to, want string }{
		{"bad effects", "effects: keyed,", "effects: twice,", `tools.http[0]: tool "charge": effects "twice"`},
		{"bad url", `url: "http://127.0.0.1:1/charge"`, `url: "ftp://x"`, `tools.http[0]: tool "charge": url:`},
		{"bad policy", "in_doubt: {charge: reconcile}", "in_doubt: {charge: guess}", `agents[0].in_doubt.charge: "guess": want retry, reconcile, ask or fail`},
		{"reconcile without a status call", `, status_url: "http://127.0.0.1:1/c/{key}"`, `, in_doubt: reconcile`, `tools.http[0].in_doubt: reconcile needs a status_url`},
		{"bad override", "calculator: {effects: none}", "calculator: {effects: maybe}", `tools.effects.calculator.effects: effects "maybe"`},
		{"name taken", "name: charge,", "name: clock,", `tools.http[0].name: "clock" is taken`},
		{"status tool of another server", "calculator: {effects: none}", "bank__pay: {status_tool: other__status}", `tools.effects.bank__pay.status_tool: "other__status"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(strings.Replace(base, c.from, c.to, 1)), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
	c, err := Parse([]byte(base), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.inDoubt(c.Agents[0], []string{"charge", "calculator"}); got["charge"] != "reconcile" || len(got) != 1 {
		t.Fatalf("in_doubt %v", got)
	}
	if _, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }}); err != nil {
		t.Fatalf("build: %v", err)
	}
}
