package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/auth"
	"agentd/internal/runtime"
	"agentd/internal/store"
)

// Options configure the MCP face.
type Options struct {
	// Version is the server version announced to clients (default "dev").
	Version string
	// MaxBodyBytes limits request bodies (default: the SDK's 4 MiB).
	MaxBodyBytes int64
	// SessionIdle closes a legacy (stateful) session that saw no request
	// for this long (default 10 minutes).
	SessionIdle time.Duration
	// Proxied turns off the SDK's DNS-rebinding guard, which refuses a
	// request that reached a loopback listener under another host name: a
	// server behind a reverse proxy on the same machine (server.public_url
	// set) is reached exactly so.
	Proxied bool
	Logger  *slog.Logger
}

// Server is the MCP face: every agent a tool, over the runtime. Its only
// state is the SDK's: the tool lists (fixed at start, as the agents are)
// and the SDK's legacy sessions.
type Server struct {
	rt       *runtime.Runtime
	opts     Options
	all      *mcp.Server
	perAgent map[string]*mcp.Server
	// stateless serves clients of protocol 2026-07-28 and later (no
	// sessions: any replica answers any request); stateful serves older
	// clients, whose sessions carry elicitation and cancellation.
	stateless, stateful *mcp.StreamableHTTPHandler
}

// New builds the MCP servers for rt's agents.
func New(rt *runtime.Runtime, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{rt: rt, opts: opts, perAgent: make(map[string]*mcp.Server)}
	var tools []tool
	for _, a := range rt.Agents() {
		t := newTool(a)
		tools = append(tools, t)
		s.perAgent[a.ID] = s.newMCPServer("agentd-"+a.ID, []tool{t})
	}
	s.all = s.newMCPServer("agentd", tools)
	getServer := func(r *http.Request) *mcp.Server { return s.serverFor(r) }
	s.stateless = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless: true, PropagateRequestCancellation: true, DisableLocalhostProtection: opts.Proxied,
		MaxRequestBodyBytes: opts.MaxBodyBytes, Logger: quiet(opts.Logger),
	})
	s.stateful = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout: opts.SessionIdle, DisableLocalhostProtection: opts.Proxied,
		MaxRequestBodyBytes: opts.MaxBodyBytes, Logger: quiet(opts.Logger),
	})
	return s
}

// newMCPServer is an SDK server offering tools.
func (s *Server) newMCPServer(name string, tools []tool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Title: "agentd", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "Each tool is an agent hosted by agentd; a call is one run of it. " +
			"Pass context_id (from a result's _meta) to continue a conversation.",
		Logger: quiet(s.opts.Logger),
	})
	srv.AddReceivingMiddleware(s.guard)
	for _, t := range tools {
		srv.AddTool(t.def, s.handler(t))
	}
	return srv
}

// Mount declares the MCP routes on r: /mcp offers every agent,
// /mcp/agents/{agentID} one.
func (s *Server) Mount(r chi.Router) {
	r.Handle("/mcp", s)
	r.Handle("/mcp/agents/{agentID}", s)
}

// ServeHTTP hands the request to the SDK: a client of the sessionless
// protocol (2026-07-28, which says so in its Mcp-Protocol-Version header)
// to the stateless handler, any other to the stateful one.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serverFor(r) == nil {
		http.Error(w, fmt.Sprintf("agent %q not found (agents: %s)", chi.URLParam(r, "agentID"), strings.Join(s.rt.AgentIDs(), ", ")), http.StatusNotFound)
		return
	}
	r = withTokenInfo(r)
	if r.Header.Get("Mcp-Protocol-Version") >= sessionlessVersion {
		s.stateless.ServeHTTP(w, r)
		return
	}
	s.stateful.ServeHTTP(w, r)
}

// sessionlessVersion is the first MCP revision without sessions (SEP-2575).
const sessionlessVersion = "2026-07-28"

// serverFor is the SDK server the path names; nil for an unknown agent.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	if id := chi.URLParam(r, "agentID"); id != "" {
		return s.perAgent[id]
	}
	return s.all
}

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
// context and checks its scope: listing tools needs agents:read, calling
// one runs:write.
func (s *Server) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
			if p, ok := extra.TokenInfo.Extra[principalKey].(auth.Principal); ok {
				ctx = auth.WithPrincipal(store.WithTenant(ctx, p.Tenant), p)
			}
		}
		var need auth.Scope
		switch method {
		case "tools/list":
			need = auth.AgentsRead
		case "tools/call":
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

// Close ends the legacy sessions still open (a client need not end its
// own), which ends the calls they carry; their runs go on. Call it once
// the HTTP server no longer serves the routes.
func (s *Server) Close() {
	servers := []*mcp.Server{s.all}
	for _, srv := range s.perAgent {
		servers = append(servers, srv)
	}
	for _, srv := range servers {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	}
}
