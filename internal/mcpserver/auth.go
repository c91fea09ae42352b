package mcpserver

import (
	"context"
	"net/http"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/auth"
	"agentd/internal/run"
)

// The caller: agentd's edge (auth.Middleware) authenticates every request
// to /mcp — the MCP authorization spec's bearer token is an agentd API key
// or JWT — and the face hands the caller on to the SDK and to each
// request's handler.

// withTokenInfo hands the caller agentd's edge authenticated (auth.Middleware)
// to the SDK as its TokenInfo: the SDK binds a legacy session to the user
// who opened it, and passes it to every request's handler (RequestExtra),
// where guard reads the tenant and scopes. Without authentication there is
// no caller and the SDK sees none.
func withTokenInfo(r *http.Request) *http.Request {
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok {
		return r
	}
	info := &sdkauth.TokenInfo{
		UserID: p.Tenant + "\x00" + p.Method + "\x00" + p.Name,
		Extra:  map[string]any{principalKey: p},
	}
	for _, sc := range p.Scopes {
		info.Scopes = append(info.Scopes, string(sc))
	}
	// RequireBearerToken is the SDK's one way to put TokenInfo in a
	// request's context. The key or token was verified at the edge, so
	// the verifier only returns info; a caller that used X-API-Key gets
	// the bearer header the SDK looks for.
	if !strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ") {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer verified-at-the-edge")
	}
	var out *http.Request
	sdkauth.RequireBearerToken(func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) {
		return info, nil
	}, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		out = r
	})).ServeHTTP(nil, r)
	return out
}

const principalKey = "agentd.principal"

// guard puts the caller's tenant and principal into every request's
// context and checks its scope: listing tools needs agents:read, polling a
// task runs:read, calling a tool or acting on a task runs:write.
func (s *Server) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
			if p, ok := extra.TokenInfo.Extra[principalKey].(auth.Principal); ok {
				ctx = auth.WithPrincipal(run.WithTenant(ctx, p.Tenant), p)
			}
		}
		var need auth.Scope
		switch method {
		case "tools/list":
			need = auth.AgentsRead
		case "tasks/get":
			need = auth.RunsRead
		case "tools/call", "tasks/update", "tasks/cancel":
			need = auth.RunsWrite
		}
		if need != "" && !auth.Allowed(ctx, need) {
			return nil, &jsonrpc.Error{Code: codeForbidden, Message: method + " needs the scope " + string(need) + ", which this key or token does not grant"}
		}
		return next(ctx, method, req)
	}
}

// codeForbidden is the JSON-RPC error of a caller without the scope a
// method needs (the implementation-defined range, as A2A's -31403 is not
// MCP's).
const codeForbidden = -32003
