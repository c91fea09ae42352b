package config

import (
	"fmt"
	"net/url"
	"strings"

	"agentd/internal/auth"
)

// Auth declares who may call the server. When it is set, every route but
// the public agent cards, /healthz and /readyz needs an API key or a JWT.
type Auth struct {
	APIKeys []APIKey `json:"api_keys,omitempty"`
	JWT     *JWT     `json:"jwt,omitempty"`
}

// APIKey is one API key: its name (for logs), the tenant it acts for, its
// scopes, and where the key comes from — an environment variable holding
// the key (key_env) or the key's SHA-256 hex digest (key_sha256). The key
// itself never appears in the file.
type APIKey struct {
	Name      string   `json:"name"`
	Tenant    string   `json:"tenant"`
	Scopes    []string `json:"scopes"`
	KeyEnv    string   `json:"key_env,omitempty"`
	KeySHA256 string   `json:"key_sha256,omitempty"`
}

// JWT accepts bearer JWTs: HS256 signed with the secret in the named
// environment variable, and RS256/ES256 signed with a key of the JWKS at
// jwks_url. Issuer and audience are checked on every token.
type JWT struct {
	Issuer         string `json:"issuer"`
	Audience       string `json:"audience"`
	HS256SecretEnv string `json:"hs256_secret_env,omitempty"`
	JWKSURL        string `json:"jwks_url,omitempty"`
	// TenantClaim names the claim that holds the tenant (default
	// "tenant"). Scopes come from "scope" (space-separated) or "scp".
	TenantClaim string `json:"tenant_claim,omitempty"`
	// Leeway tolerates clock skew on exp and nbf (default 30s).
	Leeway Duration `json:"leeway,omitempty"`
	// JWKSMaxAge is how long a fetched JWKS is used (default 10m);
	// JWKSMinRefetch how often an unknown key id may refetch it (default
	// 10s).
	JWKSMaxAge     Duration `json:"jwks_max_age,omitempty"`
	JWKSMinRefetch Duration `json:"jwks_min_refetch,omitempty"`
}

// validate checks the auth section's shape; the keys themselves are
// read from the environment when the server starts (Authenticator).
func (a *Auth) validate() error {
	if len(a.APIKeys) == 0 && a.JWT == nil {
		return fmt.Errorf("auth: declare api_keys, jwt, or both")
	}
	names := map[string]bool{}
	for i, k := range a.APIKeys {
		path := fmt.Sprintf("auth.api_keys[%d]", i)
		switch {
		case k.Name == "":
			return fmt.Errorf("%s.name: required", path)
		case names[k.Name]:
			return fmt.Errorf("%s.name: %q is declared twice", path, k.Name)
		case k.Tenant == "":
			return fmt.Errorf("%s.tenant: required", path)
		case len(k.Scopes) == 0:
			return fmt.Errorf("%s.scopes: required (any of %s)", path, scopeNames())
		case (k.KeyEnv == "") == (k.KeySHA256 == ""):
			return fmt.Errorf("%s: set exactly one of key_env and key_sha256", path)
		}
		names[k.Name] = true
		if _, err := auth.ParseScopes(k.Scopes); err != nil {
			return fmt.Errorf("%s.%v", path, err)
		}
	}
	if j := a.JWT; j != nil {
		switch {
		case j.Issuer == "":
			return fmt.Errorf("auth.jwt.issuer: required")
		case j.Audience == "":
			return fmt.Errorf("auth.jwt.audience: required")
		case j.HS256SecretEnv == "" && j.JWKSURL == "":
			return fmt.Errorf("auth.jwt: set hs256_secret_env, jwks_url, or both")
		}
		if j.JWKSURL != "" {
			if u, err := url.Parse(j.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return fmt.Errorf("auth.jwt.jwks_url: %q is not an absolute http(s) URL", j.JWKSURL)
			}
		}
	}
	return nil
}

func scopeNames() string {
	s := make([]string, len(auth.AllScopes))
	for i, sc := range auth.AllScopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ", ")
}

// Authenticator builds the authenticator the section declares, reading
// keys and secrets from the environment; nil when auth is not configured.
func (c *Config) Authenticator(getenv func(string) string) (*auth.Authenticator, error) {
	a := c.Auth
	if a == nil {
		return nil, nil
	}
	opts := auth.Options{}
	for i, k := range a.APIKeys {
		scopes, err := auth.ParseScopes(k.Scopes)
		if err != nil {
			return nil, fmt.Errorf("auth.api_keys[%d].%v", i, err)
		}
		key := auth.APIKey{Name: k.Name, Tenant: k.Tenant, Scopes: scopes, SHA256: k.KeySHA256}
		if k.KeyEnv != "" {
			if key.Key = getenv(k.KeyEnv); key.Key == "" {
				return nil, fmt.Errorf("auth.api_keys[%d].key_env: environment variable %s is empty or unset", i, k.KeyEnv)
			}
		}
		opts.APIKeys = append(opts.APIKeys, key)
	}
	if j := a.JWT; j != nil {
		jo := &auth.JWTOptions{
			Issuer: j.Issuer, Audience: j.Audience, JWKSURL: j.JWKSURL, TenantClaim: j.TenantClaim,
			Leeway: j.Leeway.Or(0), JWKSMaxAge: j.JWKSMaxAge.Or(0), MinRefetch: j.JWKSMinRefetch.Or(0),
		}
		if j.HS256SecretEnv != "" {
			if jo.HS256Secret = []byte(getenv(j.HS256SecretEnv)); len(jo.HS256Secret) == 0 {
				return nil, fmt.Errorf("auth.jwt.hs256_secret_env: environment variable %s is empty or unset", j.HS256SecretEnv)
			}
		}
		opts.JWT = jo
	}
	return auth.New(opts)
}
