package mcpserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/runtime"
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
	// TaskAfter is how long a tools/call of a client that takes tasks
	// (SEP-2663) holds on to its run before it answers a task handle
	// instead (default 5s).
	TaskAfter time.Duration
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
	tools    map[string]tool // by agent id
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
	if opts.TaskAfter <= 0 {
		opts.TaskAfter = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{rt: rt, opts: opts, perAgent: make(map[string]*mcp.Server), tools: make(map[string]tool)}
	var tools []tool
	for _, a := range rt.Agents() {
		t := newTool(a)
		tools = append(tools, t)
		s.tools[a.ID] = t
		s.perAgent[a.ID] = s.newMCPServer("agentd-"+a.ID, a.ID, []tool{t})
	}
	s.all = s.newMCPServer("agentd", "", tools)
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

// newMCPServer is an SDK server offering tools, and the tasks of their
// runs (agentID's, or every agent's when "").
func (s *Server) newMCPServer(name, agentID string, tools []tool) *mcp.Server {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasksExtension, nil)
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Title: "agentd", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "Each tool is an agent hosted by agentd; a call is one run of it. " +
			"Pass context_id (from a result's _meta) to continue a conversation.",
		Capabilities: caps,
		Logger:       quiet(s.opts.Logger),
	})
	srv.AddReceivingMiddleware(s.guard, s.taskMiddleware)
	for _, t := range tools {
		srv.AddTool(t.def, s.handler(t))
	}
	s.addTaskMethods(srv, agentID)
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
