package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"agentd/internal/errdefs"
	"agentd/internal/push"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// Options configure the A2A front end.
type Options struct {
	// PublicURL is the externally visible base URL of the server (scheme and
	// host, optionally a path prefix). Empty: derived from each request's
	// Host and X-Forwarded-Proto / X-Forwarded-Host headers.
	PublicURL string
	// DefaultAgent is served at /.well-known/agent-card.json (default: the
	// first agent).
	DefaultAgent string
	// MaxBodyBytes limits request bodies (default 1 MiB).
	MaxBodyBytes int64
	// KeepAlive is the interval of SSE keep-alive comments on open streams
	// (default 15s).
	KeepAlive time.Duration
	// CancelWait bounds how long CancelTask waits for a running task to
	// reach canceled before answering (default 10s).
	CancelWait time.Duration
	// CardMaxAge is the Cache-Control max-age of agent cards (default 5m).
	CardMaxAge time.Duration
	// Push configures push-notification delivery (internal/push).
	Push PushOptions
	// PushStore keeps the tasks' push configs and their deliveries'
	// cursors (store.PushConfigs); nil: the push-config methods answer
	// that push notifications are not available here.
	PushStore push.Store
	// RunWebhookBody builds the body of another face's run webhook (a push
	// config stored with "run": true, the Agent Protocol's): one POST once
	// the run stopped (push_run.go). Without it such configs are dropped.
	RunWebhookBody func(ctx context.Context, t run.Task) ([]byte, error)
	// Provider, when set, is published on every card.
	Provider *a2a.AgentProvider
	// Security, when it enables a scheme, is declared on every card, and
	// the extended card is served to authenticated callers.
	Security Security
	Logger   *slog.Logger
}

// Server serves every hosted agent over A2A: cards, JSON-RPC (v1.0 and
// v0.3 on one endpoint, chosen by A2A-Version) and HTTP+JSON (v1.0 and the
// v0.3 routes under /v1). It translates and holds no business state;
// push delivery, which outlives requests, is internal/push's.
type Server struct {
	rt     *runtime.Runtime
	opts   Options
	agents map[string]*binding
	push   pushState
}

// binding is one agent's request handler and the SDK transports over it.
type binding struct {
	h                  *handler
	jsonrpc, jsonrpcV0 http.Handler
	restV1, restV0     http.Handler
}

// New builds the A2A front end over rt.
func New(rt *runtime.Runtime, opts Options) (*Server, error) {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = 15 * time.Second
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = 10 * time.Second
	}
	if opts.CardMaxAge <= 0 {
		opts.CardMaxAge = 5 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	if opts.PublicURL != "" && !strings.HasPrefix(opts.PublicURL, "http://") && !strings.HasPrefix(opts.PublicURL, "https://") {
		return nil, errdefs.Validationf("a2a: public URL %q must start with http:// or https://", opts.PublicURL)
	}
	agents := rt.Agents()
	if len(agents) == 0 {
		return nil, errdefs.Validationf("a2a: no agents to serve")
	}
	if opts.DefaultAgent == "" {
		opts.DefaultAgent = agents[0].ID
	}
	if _, err := rt.Agent(opts.DefaultAgent); err != nil {
		return nil, fmt.Errorf("a2a: default agent: %w", err)
	}
	s := &Server{rt: rt, opts: opts, agents: map[string]*binding{}}
	transport := []a2asrv.TransportOption{
		a2asrv.WithTransportKeepAlive(opts.KeepAlive),
		a2asrv.WithTransportPanicHandler(func(r any) error {
			opts.Logger.Error("a2a: panic while serving a request", "panic", r)
			return a2a.NewError(a2a.ErrInternalError, "internal error")
		}),
	}
	for _, a := range agents {
		h := &handler{s: s, agent: a}
		g := guard{next: h, extend: s.extendedCard(a)}
		s.agents[a.ID] = &binding{
			h:         h,
			jsonrpc:   a2asrv.NewJSONRPCHandler(g, transport...),
			jsonrpcV0: a2av0.NewJSONRPCHandler(g, transport...),
			restV1:    a2asrv.NewRESTHandler(g, transport...),
			restV0:    a2av0.NewRESTHandler(g, transport...),
		}
	}
	return s, nil
}

// Mount declares the A2A routes on r:
//
//	GET  /.well-known/agent-card.json                 the default agent's card
//	GET  /agents/{id}/.well-known/agent-card.json     each agent's card
//	POST /agents/{id}/jsonrpc                         JSON-RPC, v1.0 or v0.3 by A2A-Version
//	     /agents/{id}/rest/…                          HTTP+JSON v1.0; v0.3 under /rest/v1/…
func (s *Server) Mount(r chi.Router) {
	// Cards answer HEAD too, as every GET route of the server does.
	getHead := func(r chi.Router, path string, h http.HandlerFunc) {
		r.Get(path, h)
		r.Head(path, h)
	}
	getHead(r, "/.well-known/agent-card.json", s.defaultCard)
	getHead(r, "/.well-known/agent.json", s.defaultCard) // pre-0.3 clients
	r.Route("/agents/{agentID}", func(r chi.Router) {
		getHead(r, "/.well-known/agent-card.json", s.agentCard)
		getHead(r, "/.well-known/agent.json", s.agentCard)
		r.HandleFunc("/jsonrpc", s.serveJSONRPC)
		r.HandleFunc("/rest/*", s.serveREST)
	})
}

// Handler returns a router serving only the A2A routes.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	s.Mount(r)
	return r
}

func (s *Server) binding(r *http.Request) (*binding, string) {
	id := chi.URLParam(r, "agentID")
	return s.agents[id], id
}

func (s *Server) unknownAgent(id string) string {
	return fmt.Sprintf("agent %q is not hosted here (agents: %v)", id, s.rt.AgentIDs())
}

// serveJSONRPC routes a JSON-RPC call by protocol version: A2A-Version
// (header or query) missing or 0.3 ⇒ v0.3, 1.0 ⇒ v1.0, anything else ⇒
// -32009. The body is read here, bounded, so that an oversized request is
// refused before anything is decoded.
func (s *Server) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	b, id := s.binding(r)
	body, err := readBody(r, s.opts.MaxBodyBytes)
	switch {
	case b == nil:
		jsonrpcError(w, http.StatusNotFound, body, a2a.ErrInvalidRequest, s.unknownAgent(id))
		return
	case err == errBodyTooLarge:
		jsonrpcError(w, http.StatusRequestEntityTooLarge, nil, a2a.ErrInvalidRequest,
			fmt.Sprintf("request body exceeds the limit of %d bytes", s.opts.MaxBodyBytes))
		return
	case err != nil:
		jsonrpcError(w, http.StatusBadRequest, nil, a2a.ErrInvalidRequest, "reading the request body: "+err.Error())
		return
	}
	if p := checkBody(r.Header.Get("Content-Type"), body); p != nil {
		status, code := http.StatusOK, a2a.ErrParseError
		if p.unsupported {
			status, code = http.StatusUnsupportedMediaType, a2a.ErrInvalidRequest
		}
		jsonrpcError(w, status, nil, code, p.msg)
		return
	}
	var next http.Handler
	switch v := requestVersion(r); v {
	case "", "0.3", "0.3.0":
		if m := v1Method(body); v == "" && m != "" {
			// The commonest first mistake: a v1.0 call without the header.
			jsonrpcError(w, http.StatusOK, body, a2a.ErrMethodNotFound,
				fmt.Sprintf("method %q is A2A v1.0: send the header A2A-Version: 1.0 (a request without it is v0.3)", m))
			return
		}
		next = b.jsonrpcV0
	case "1.0", "1", "1.0.0", "1.0.1":
		next = b.jsonrpc
	default:
		jsonrpcError(w, http.StatusOK, body, a2a.ErrVersionNotSupported,
			fmt.Sprintf("A2A-Version %q is not supported (supported: 1.0, 0.3; none means 0.3)", v))
		return
	}
	s.serve(w, r, next, body, false)
}

// serveREST serves the HTTP+JSON binding: paths under /rest/v1/ are the
// v0.3 routes, the others v1.0. A v1.0 route called with an A2A-Version
// other than 1.0 is refused.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	b, id := s.binding(r)
	if b == nil {
		restError(w, http.StatusNotFound, "NOT_FOUND", a2a.ErrInvalidRequest, s.unknownAgent(id))
		return
	}
	body, err := readBody(r, s.opts.MaxBodyBytes)
	switch {
	case err == errBodyTooLarge:
		restError(w, http.StatusRequestEntityTooLarge, "INVALID_ARGUMENT", a2a.ErrInvalidRequest,
			fmt.Sprintf("request body exceeds the limit of %d bytes", s.opts.MaxBodyBytes))
		return
	case err != nil:
		restError(w, http.StatusBadRequest, "INVALID_ARGUMENT", a2a.ErrInvalidRequest, "reading the request body: "+err.Error())
		return
	}
	if p := checkBody(r.Header.Get("Content-Type"), body); p != nil {
		status := http.StatusBadRequest
		if p.unsupported {
			status = http.StatusUnsupportedMediaType
		}
		restError(w, status, "INVALID_ARGUMENT", a2a.ErrInvalidRequest, p.msg)
		return
	}
	path := "/" + chi.URLParam(r, "*")
	next := b.restV1
	if strings.HasPrefix(path, a2av0.RESTPathPrefix+"/") {
		next = b.restV0
	} else if v := requestVersion(r); v != "" && v != "1.0" && v != "1" {
		restError(w, http.StatusBadRequest, "FAILED_PRECONDITION", a2a.ErrVersionNotSupported,
			fmt.Sprintf("A2A-Version %q is not supported on the v1.0 routes (v0.3 routes live under %s)", v, a2av0.RESTPathPrefix))
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	s.serve(w, r2, next, body, true)
}

// serve hands the request to an SDK transport with the body restored, the
// resume cursor and the response (for a controller) in its context, and
// SSE responses held back until their first event (see deferredWriter).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, next http.Handler, body []byte, rest bool) {
	ci := &callInfo{w: w, req: r}
	var query string
	if r.URL.RawQuery != "" { // most calls have none: no map to build
		query = r.URL.Query().Get(AfterSeqKey)
	}
	ci.after, ci.hasAfter, ci.afterErr = resumeCursor(body, r.Header, query)
	r = r.WithContext(withCallInfo(r.Context(), ci))
	r.Body = io.NopCloser(bytes.NewReader(body))
	dw := &deferredWriter{ResponseWriter: w, rest: rest, flush: &ci.flush}
	// The v1.0 HTTP+JSON binding's media type, for clients that take it
	// (a2a-go's client asks for application/json, and gets that).
	dw.a2aJSON = rest && !strings.HasPrefix(r.URL.Path, a2av0.RESTPathPrefix+"/") && acceptsA2AJSON(r.Header.Get("Accept"))
	next.ServeHTTP(dw, r)
	dw.finish()
}

// acceptsA2AJSON reports whether an Accept header takes
// application/a2a+json: no header, that type, or a wildcard that covers it.
func acceptsA2AJSON(accept string) bool {
	if accept == "" {
		return true
	}
	for _, r := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(r), ";")
		switch strings.TrimSpace(mt) {
		case "application/a2a+json", "*/*", "application/*":
			return true
		}
	}
	return false
}

// requestVersion returns the A2A-Version service parameter: the header, or
// the query parameter of the same name.
func requestVersion(r *http.Request) string {
	if v := r.Header.Get(a2a.SvcParamVersion); v != "" {
		return strings.TrimSpace(v)
	}
	return strings.TrimSpace(r.URL.Query().Get(a2a.SvcParamVersion))
}

// v1Method returns the JSON-RPC method of body when it is one of A2A
// v1.0's (which v0.3 spells differently), "" otherwise.
func v1Method(body []byte) string {
	var env struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	switch env.Method {
	case "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
		"DeleteTaskPushNotificationConfig", "GetExtendedAgentCard":
		return env.Method
	}
	return ""
}
