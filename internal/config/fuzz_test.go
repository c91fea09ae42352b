package config

import (
	"testing"

	"agentd/internal/errdefs"
)

// FuzzParse: any configuration file loads or is refused with a validation
// error naming what is wrong — never a panic. Files it refers to resolve
// in the demo's embedded files only, so the fuzzer reads nothing from disk.
func FuzzParse(f *testing.F) {
	f.Add(demoYAML)
	for _, s := range []string{
		"server: {addr: 127.0.0.1:0}\nproviders: {p: {type: scripted, rules: [{reply: hi}]}}\nagents: [{id: a, engine: loop, provider: p}]\n",
		"auth:\n  api_keys: [{name: k, tenant: t, scopes: [admin], key_sha256: " + "0000000000000000000000000000000000000000000000000000000000000000}]\n",
		"auth: {jwt: {issuer: i, audience: a, jwks_url: 'https://x/jwks'}}\nlimits: {requests_per_second: 1.5, max_parts: -1}\n",
		"agents: [{id: r, engine: flow, flow: flows/refund}]\n",
		"agents: [{id: g, engine: graph, workflow: {name: w, steps: []}}]\n",
		"a: &a [*a]\n", "{", "agents: [[[[]]]]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := parse(b, "fuzz.yaml", files{fs: demoFiles})
		if err != nil && !errdefs.IsValidation(err) {
			t.Fatalf("%q: %v is not a validation error", b, err)
		}
	})
}
