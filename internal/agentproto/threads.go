package agentproto

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// threadJSON is a thread as LangGraph clients read it.
type threadJSON struct {
	ThreadID   string                     `json:"thread_id"`
	CreatedAt  time.Time                  `json:"created_at"`
	UpdatedAt  time.Time                  `json:"updated_at"`
	Metadata   map[string]any             `json:"metadata"`
	Status     runtime.ThreadStatus       `json:"status"`
	Values     map[string]any             `json:"values"`
	Interrupts map[string][]interruptJSON `json:"interrupts"`
	Config     map[string]any             `json:"config"`
}

// view renders th with its status (from its newest run) and, when
// withValues, its current values and interrupts.
func (s *Server) view(ctx context.Context, th run.Thread, withValues bool) (threadJSON, error) {
	head, err := s.rt.ThreadHead(ctx, th.ID)
	if err != nil {
		return threadJSON{}, err
	}
	out := threadJSON{
		ThreadID: th.ID, CreatedAt: th.CreatedAt, UpdatedAt: th.UpdatedAt, Metadata: publicMetadata(th.Metadata),
		Status: runtime.StatusOf(head), Interrupts: map[string][]interruptJSON{}, Config: map[string]any{},
	}
	if head != nil && head.UpdatedAt.After(out.UpdatedAt) {
		out.UpdatedAt = head.UpdatedAt
	}
	if head != nil && head.State.Interrupted() {
		out.Interrupts[head.ID] = interruptsOf(*head)
	}
	if withValues {
		st, err := s.currentState(ctx, th.ID)
		if err != nil {
			return threadJSON{}, err
		}
		out.Values = st.Values
	}
	return out, nil
}

type createThreadBody struct {
	ThreadID   string         `json:"thread_id"`
	Metadata   map[string]any `json:"metadata"`
	IfExists   string         `json:"if_exists"`
	Supersteps []any          `json:"supersteps"`
	TTL        any            `json:"ttl"`
}

func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	var b createThreadBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case b.IfExists != "" && b.IfExists != "raise" && b.IfExists != "do_nothing":
		writeError(w, r, badInput("if_exists", "%q: want raise or do_nothing", b.IfExists))
		return
	case len(b.Supersteps) > 0:
		writeError(w, r, badInput("supersteps", "are not served: a thread's state is written by its runs"))
		return
	case b.TTL != nil:
		writeError(w, r, badInput("ttl", "is not served: the server's retention settings prune old runs"))
		return
	}
	if err := checkMetadata(b.Metadata); err != nil {
		writeError(w, r, err)
		return
	}
	th, err := s.rt.CreateThread(r.Context(), run.Thread{ID: b.ThreadID, Metadata: b.Metadata})
	if errdefs.IsConflict(err) && b.IfExists == "do_nothing" {
		th, err = s.rt.GetThread(r.Context(), b.ThreadID)
	}
	if errdefs.IsConflict(err) {
		writeDetail(w, http.StatusConflict, "thread "+b.ThreadID+" already exists")
		return
	}
	s.answerThread(w, r, th, err, false)
}

// answerThread answers th (or err) as JSON.
func (s *Server) answerThread(w http.ResponseWriter, r *http.Request, th run.Thread, err error, withValues bool) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	v, err := s.view(r.Context(), th, withValues)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// pathThread returns the thread the path names (404 when it is not one of
// the caller's).
func (s *Server) pathThread(w http.ResponseWriter, r *http.Request) (run.Thread, bool) {
	th, err := s.rt.GetThread(r.Context(), chi.URLParam(r, "threadID"))
	if err != nil {
		writeError(w, r, err)
		return run.Thread{}, false
	}
	return th, true
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	if th, ok := s.pathThread(w, r); ok {
		s.answerThread(w, r, th, nil, true)
	}
}

func (s *Server) patchThread(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Metadata map[string]any `json:"metadata"`
		TTL      any            `json:"ttl"`
	}
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.TTL != nil {
		writeError(w, r, badInput("ttl", "is not served: the server's retention settings prune old runs"))
		return
	}
	if err := checkMetadata(b.Metadata); err != nil {
		writeError(w, r, err)
		return
	}
	th, err := s.rt.UpdateThreadMetadata(r.Context(), chi.URLParam(r, "threadID"), b.Metadata)
	s.answerThread(w, r, th, err, false)
}

func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) {
	if err := s.rt.DeleteThread(r.Context(), chi.URLParam(r, "threadID")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) copyThread(w http.ResponseWriter, r *http.Request) {
	th, err := s.copyWithHistory(r.Context(), chi.URLParam(r, "threadID"))
	s.answerThread(w, r, th, err, false)
}
