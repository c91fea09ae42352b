package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Scope is a permission a key or token grants.
type Scope string

// The scopes agentd knows. Admin grants every other one.
const (
	AgentsRead Scope = "agents:read"
	RunsRead   Scope = "runs:read"
	RunsWrite  Scope = "runs:write"
	Admin      Scope = "admin"
)

// AllScopes lists the known scopes, for messages and documentation.
var AllScopes = []Scope{AgentsRead, RunsRead, RunsWrite, Admin}

// ParseScopes checks configured scope names; an unknown one is an error
// naming it.
func ParseScopes(names []string) ([]Scope, error) {
	out := make([]Scope, 0, len(names))
	for i, n := range names {
		s := Scope(n)
		if !slices.Contains(AllScopes, s) {
			return nil, fmt.Errorf("scopes[%d]: unknown scope %q (known: %s)", i, n, scopeList(AllScopes))
		}
		out = append(out, s)
	}
	return out, nil
}

// knownScopes keeps the scopes of a token that agentd knows; a token may
// carry other services' scopes too.
func knownScopes(names []string) []Scope {
	var out []Scope
	for _, n := range names {
		if s := Scope(n); slices.Contains(AllScopes, s) {
			out = append(out, s)
		}
	}
	return out
}

func scopeList(ss []Scope) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, ", ")
}

// Principal is an authenticated caller.
type Principal struct {
	// Name is the API key's configured name or the token's subject.
	Name   string
	Tenant string
	Scopes []Scope
	// Method is "api_key" or "jwt".
	Method string
}

// Has reports whether p may act with scope s.
func (p Principal) Has(s Scope) bool {
	return slices.Contains(p.Scopes, s) || slices.Contains(p.Scopes, Admin)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the caller of ctx; ok is false when the request
// was not authenticated (authentication is off).
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Allowed reports whether the caller of ctx may act with scope s. Without
// a principal — authentication is not configured — everything is allowed.
func Allowed(ctx context.Context, s Scope) bool {
	p, ok := PrincipalFrom(ctx)
	return !ok || p.Has(s)
}
