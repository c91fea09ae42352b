package agentproto

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	runv "agentd/internal/run"
	"agentd/internal/runtime"
)

// Prefix is where Mount serves the Agent Protocol: a LangGraph client's
// apiUrl is the server's address followed by it.
const Prefix = "/lg"

// Options configure the face.
type Options struct {
	// MaxBodyBytes limits request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Heartbeat is the keep-alive interval of silent streams (default 15s).
	Heartbeat time.Duration
	// Webhooks keeps runs' webhooks as push configs, which the push
	// delivery (internal/push, through the A2A face's renderer) claims
	// and posts (webhook.go). Nil: a run that names a webhook is refused.
	Webhooks WebhookStore
	// Memory serves the store routes (store.go); nil answers 503 there.
	Memory Memory
	Logger *slog.Logger
}

// WebhookStore is where a run's webhook is kept: the push configs' store
// (push.Store has the method).
type WebhookStore interface {
	PutPushConfig(ctx context.Context, c runv.PushConfig) error
}

// Server is the Agent Protocol face of the runtime. It translates HTTP to
// runtime calls and the run log to LangGraph stream events, and holds no
// business state.
type Server struct {
	rt   *runtime.Runtime
	opts Options
}

// New returns the face over rt.
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
	return &Server{rt: rt, opts: opts}
}

// Mount declares every route of the face under Prefix on r.
func (s *Server) Mount(r chi.Router) {
	r.Route(Prefix, func(r chi.Router) {
		r.NotFound(func(w http.ResponseWriter, r *http.Request) {
			writeDetail(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
		})
		r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
			writeDetail(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
		})
		r.Get("/info", s.info)

		r.Post("/assistants/search", s.searchAssistants)
		r.Post("/assistants/count", s.countAssistants)
		r.Get("/assistants/{assistantID}", s.getAssistant)
		r.Get("/assistants/{assistantID}/schemas", s.assistantSchemas)
		r.Get("/assistants/{assistantID}/graph", s.assistantGraph)
		r.Get("/assistants/{assistantID}/subgraphs", s.assistantSubgraphs)
		r.Get("/assistants/{assistantID}/subgraphs/{namespace}", s.assistantSubgraphs)
		r.Post("/assistants", s.createAssistant)
		r.Patch("/assistants/{assistantID}", s.updateAssistant)
		r.Delete("/assistants/{assistantID}", s.deleteAssistant)
		r.Post("/assistants/{assistantID}/versions", s.assistantVersions)
		r.Post("/assistants/{assistantID}/latest", s.setLatestAssistant)

		r.Post("/threads", s.createThread)
		r.Post("/threads/search", s.searchThreads)
		r.Post("/threads/count", s.countThreads)
		r.Post("/threads/prune", s.pruneThreads)
		r.Get("/threads/{threadID}", s.getThread)
		r.Patch("/threads/{threadID}", s.patchThread)
		r.Delete("/threads/{threadID}", s.deleteThread)
		r.Post("/threads/{threadID}/copy", s.copyThread)
		r.Get("/threads/{threadID}/state", s.getState)
		r.Post("/threads/{threadID}/state", s.updateState)
		r.Get("/threads/{threadID}/state/{checkpointID}", s.getStateAt)
		r.Post("/threads/{threadID}/state/checkpoint", s.getStateAtBody)
		r.Get("/threads/{threadID}/history", s.getHistory)
		r.Post("/threads/{threadID}/history", s.postHistory)
		r.Get("/threads/{threadID}/stream", s.threadStream)

		r.Post("/threads/{threadID}/runs", s.createRun)
		r.Post("/threads/{threadID}/runs/stream", s.streamRun)
		r.Post("/threads/{threadID}/runs/wait", s.waitRun)
		r.Get("/threads/{threadID}/runs", s.listRuns)
		r.Get("/threads/{threadID}/runs/{runID}", s.getRun)
		r.Delete("/threads/{threadID}/runs/{runID}", s.deleteRun)
		r.Post("/threads/{threadID}/runs/{runID}/cancel", s.cancelRun)
		r.Get("/threads/{threadID}/runs/{runID}/join", s.joinRun)
		r.Get("/threads/{threadID}/runs/{runID}/stream", s.joinStream)
		r.Post("/runs", s.createRun)
		r.Post("/runs/batch", s.createBatch)
		r.Post("/runs/cancel", s.cancelMany)
		r.Post("/runs/stream", s.streamRun)
		r.Post("/runs/wait", s.waitRun)
		r.Get("/runs/{runID}/stream", s.joinStream)

		s.mountStore(r)
		r.Post("/runs/crons", s.createCron) // crons.go
		r.Post("/threads/{threadID}/runs/crons", s.createThreadCron)
		r.Post("/runs/crons/search", s.searchCrons)
		r.Post("/runs/crons/count", s.countCrons)
		r.Delete("/runs/crons/{cronID}", s.deleteCron)
		r.Patch("/runs/crons/{cronID}", patchCron)
	})
}

// info answers the server's description, as LangGraph servers do.
func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"version": "agentd",
		"flags":   map[string]bool{"assistants": true, "crons": true, "langsmith": false},
	})
}
