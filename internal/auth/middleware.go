package auth

import (
	"fmt"
	"net/http"
	"strings"

	"agentd/internal/run"
)

// Middleware authenticates every request but those of public routes,
// checks the scope the route needs, and passes the caller and its tenant
// on in the request's context. A2A calls are checked for their method's
// scope by the A2A face (the method is in the body), here only for being
// authenticated.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Public(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		p, err := a.Authenticate(r.Context(), r)
		if err != nil {
			Refusal{Status: http.StatusUnauthorized, Class: "unauthorized", Title: "Unauthorized",
				Detail: err.Error(), Challenge: a.challenge(err)}.Write(w, r)
			return
		}
		if s := RouteScope(r.Method, r.URL.Path); s != "" && !p.Has(s) {
			a.Forbid(w, r, s)
			return
		}
		ctx := WithPrincipal(run.WithTenant(r.Context(), p.Tenant), p)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Forbid answers 403 for a caller that lacks scope s.
func (a *Authenticator) Forbid(w http.ResponseWriter, r *http.Request, s Scope) {
	Refusal{Status: http.StatusForbidden, Class: "forbidden", Title: "Forbidden",
		Detail:    fmt.Sprintf("%s %s needs the scope %s, which this key or token does not grant", r.Method, r.URL.Path, s),
		Challenge: fmt.Sprintf("Bearer realm=%q, error=\"insufficient_scope\", scope=%q", a.realm, string(s)),
	}.Write(w, r)
}

// Public reports whether path is served without credentials: the agent
// cards (discovery must work before a client has a key) and the health
// probes.
func Public(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/.well-known/agent-card.json", "/.well-known/agent.json":
		return true
	}
	rest, ok := strings.CutPrefix(path, "/agents/")
	if !ok {
		return false
	}
	id, sub, _ := strings.Cut(rest, "/")
	return id != "" && (sub == ".well-known/agent-card.json" || sub == ".well-known/agent.json")
}

// RouteScope is the scope a REST route needs; "" means any authenticated
// caller (A2A routes, whose method decides, and the OpenAPI document).
func RouteScope(method, path string) Scope {
	write := method != http.MethodGet && method != http.MethodHead
	switch {
	case path == "/metrics":
		return Admin
	case strings.HasPrefix(path, agentProtoPrefix):
		return agentProtoScope(method, path)
	case path == "/v1/assistants" || strings.HasPrefix(path, "/v1/assistants/"):
		return assistantScope(method, path)
	case path == "/v1/agents" || strings.HasPrefix(path, "/v1/agents/"):
		if write {
			return RunsWrite // POST /v1/agents/{id}/messages
		}
		return AgentsRead
	case strings.HasPrefix(path, "/v1/memory/"):
		// The long-term memory is the runs' data: its searches are reads.
		if write && path != "/v1/memory/items/search" {
			return RunsWrite
		}
		return RunsRead
	case strings.HasPrefix(path, "/v1/runs") || strings.HasPrefix(path, "/v1/contexts"),
		strings.HasPrefix(path, "/ag-ui/") || strings.HasPrefix(path, "/ai-sdk/"),
		strings.HasPrefix(path, "/v1/schedules"):
		if write {
			return RunsWrite // cancel, input; a UI protocol's run or chat; a schedule (it starts runs)
		}
		return RunsRead
	}
	return ""
}
