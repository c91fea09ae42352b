package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/runtime"
)

// Options configure the REST API.
type Options struct {
	// MaxBodyBytes limits request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Heartbeat is the keep-alive interval of silent SSE streams (default
	// 15s).
	Heartbeat time.Duration
	// Ready reports whether the server can serve (for /readyz); nil means
	// always ready.
	Ready func(context.Context) error
	// OpenAPI is the document served at /openapi.yaml.
	OpenAPI []byte
	// Store names the store for GET /v1/server: "memory" or "postgres".
	Store string
	// Memory serves /v1/memory (memory.go); nil answers 503 there.
	Memory Memory
	Logger *slog.Logger
}

// Server is the REST + SSE face of the runtime. It translates HTTP to
// runtime calls and holds no business state.
type Server struct {
	rt      *runtime.Runtime
	opts    Options
	started time.Time
}

// New returns the API over rt.
func New(rt *runtime.Runtime, opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{rt: rt, opts: opts, started: time.Now().UTC()}
}

// Mount declares the API's routes on r. Every GET route answers HEAD too,
// with the GET's headers and no body.
func (s *Server) Mount(r chi.Router) {
	get := func(pattern string, h http.HandlerFunc) {
		r.Get(pattern, h)
		r.Head(pattern, h) // net/http drops the body of a HEAD answer
	}
	get("/healthz", s.healthz)
	get("/readyz", s.readyz)
	get("/openapi.yaml", s.openapi)
	// Declared in full rather than under r.Route("/v1", …): a sub-router
	// costs every request a second route search and pattern join.
	get("/v1/agents", s.listAgents)
	get("/v1/agents/{agentID}", s.getAgent)
	r.Post("/v1/agents/{agentID}/messages", s.postMessage)

	get("/v1/runs", s.listRuns)
	get("/v1/runs/{runID}", s.getRun)
	get("/v1/runs/{runID}/trajectory", s.getTrajectory)
	get("/v1/runs/{runID}/checkpoints", s.listCheckpoints)
	r.Post("/v1/runs/{runID}/fork", s.forkRun)
	r.Post("/v1/runs/{runID}/cancel", s.cancelRun)
	r.Post("/v1/runs/{runID}/input", s.postInput)
	r.Post("/v1/runs/{runID}/signals", s.postSignal)
	r.Get("/v1/runs/{runID}/events", s.runEvents)
	// Not the GET handler: a stream would not end with its (dropped) body.
	r.Head("/v1/runs/{runID}/events", s.runEventsHead)

	get("/v1/assistants", s.listAssistants)
	r.Post("/v1/assistants", s.createAssistant)
	get("/v1/assistants/{assistantID}", s.getAssistant)
	r.Patch("/v1/assistants/{assistantID}", s.updateAssistant)
	r.Delete("/v1/assistants/{assistantID}", s.deleteAssistant)
	get("/v1/assistants/{assistantID}/versions", s.assistantVersions)
	r.Post("/v1/assistants/{assistantID}/latest", s.setLatestAssistant)

	get("/v1/contexts", s.listContexts)
	get("/v1/contexts/{contextID}/messages", s.contextMessages)
	get("/v1/server", s.serverInfo)

	r.Put("/v1/memory/items", s.putMemory)
	get("/v1/memory/items", s.getMemory)
	r.Delete("/v1/memory/items", s.deleteMemory)
	r.Post("/v1/memory/items/search", s.searchMemory)
	get("/v1/memory/namespaces", s.listNamespaces)
	get("/v1/schedules", s.listSchedules) // schedules.go
	r.Post("/v1/schedules", s.createSchedule)
	get("/v1/schedules/{scheduleID}", s.getSchedule)
	r.Delete("/v1/schedules/{scheduleID}", s.deleteSchedule)
}

// Handler returns a router serving only the API.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.NotFound(NotFoundHandler)
	r.MethodNotAllowed(MethodNotAllowedHandler)
	s.Mount(r)
	return r
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(r.Context()); err != nil {
			if !errdefs.IsPublic(err) {
				// The cause names the database; it is for the log.
				s.opts.Logger.Warn("not ready", "err", err)
			}
			reason := errdefs.ClientText(errdefs.NotAvailable(err))
			w.Header().Set("Retry-After", errdefs.RetryAfterSeconds)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": reason})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(s.opts.OpenAPI)
}
