package config

import (
	"strings"
	"testing"
)

const minimalAgents = "providers: {p: {type: scripted, rules: [{reply: hi}]}}\nagents: [{id: a, engine: loop, provider: p}]\n"

// TestAuthAndLimitsValidation: mistakes in the auth and limits sections
// are refused with their path.
func TestAuthAndLimitsValidation(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"auth: {}", "auth: declare api_keys, jwt, or both"},
		{"auth: {api_keys: [{tenant: t, scopes: [admin], key_env: K}]}", "auth.api_keys[0].name: required"},
		{"auth: {api_keys: [{name: k, scopes: [admin], key_env: K}]}", "auth.api_keys[0].tenant: required"},
		{"auth: {api_keys: [{name: k, tenant: t, key_env: K}]}", "auth.api_keys[0].scopes: required"},
		{"auth: {api_keys: [{name: k, tenant: t, scopes: [runs:delete], key_env: K}]}", `auth.api_keys[0].scopes[0]: unknown scope "runs:delete"`},
		{"auth: {api_keys: [{name: k, tenant: t, scopes: [admin]}]}", "auth.api_keys[0]: set exactly one of key_env and key_sha256"},
		{"auth: {api_keys: [{name: k, tenant: t, scopes: [admin], key_env: A}, {name: k, tenant: u, scopes: [admin], key_env: B}]}", `auth.api_keys[1].name: "k" is declared twice`},
		{"auth: {api_keys: [{name: k, tenant: t, scopes: [admin], key: secret}]}", `unknown`},
		{"auth: {jwt: {audience: a, hs256_secret_env: S}}", "auth.jwt.issuer: required"},
		{"auth: {jwt: {issuer: i, hs256_secret_env: S}}", "auth.jwt.audience: required"},
		{"auth: {jwt: {issuer: i, audience: a}}", "auth.jwt: set hs256_secret_env, jwks_url, or both"},
		{"auth: {jwt: {issuer: i, audience: a, jwks_url: 'file:///etc/keys'}}", "auth.jwt.jwks_url"},
		{"limits: {requests_per_second: -1}", "limits.requests_per_second: must not be negative"},
		{"limits: {max_json_depth: 65}", "limits.max_json_depth: must be between 1 and 64"},
		{"limits: {concurrent_runs: -2}", "limits.concurrent_runs"},
	} {
		_, err := Parse([]byte(minimalAgents+c.yaml), "agentd.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}

// TestAuthenticatorReadsTheEnvironment: keys come from the environment at
// startup; an unset variable is named, and the authenticator accepts the
// key it holds.
func TestAuthenticatorReadsTheEnvironment(t *testing.T) {
	c, err := Parse([]byte(minimalAgents+"auth: {api_keys: [{name: ci, tenant: acme, scopes: [runs:read], key_env: CI_KEY}], jwt: {issuer: i, audience: a, hs256_secret_env: JWT_SECRET}}\n"), "agentd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CI_KEY": "ci-key-0123456789abcdef", "JWT_SECRET": strings.Repeat("s", 32)}
	if _, err := c.Authenticator(func(k string) string { return env[k] }); err != nil {
		t.Fatalf("Authenticator: %v", err)
	}
	_, err = c.Authenticator(func(k string) string {
		if k == "JWT_SECRET" {
			return ""
		}
		return env[k]
	})
	if err == nil || !strings.Contains(err.Error(), "auth.jwt.hs256_secret_env: environment variable JWT_SECRET is empty or unset") {
		t.Fatalf("without JWT_SECRET: %v", err)
	}
	if a, err := (&Config{}).Authenticator(nil); a != nil || err != nil {
		t.Fatalf("no auth section: %v, %v, want nil, nil", a, err)
	}
}
