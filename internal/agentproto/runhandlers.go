package agentproto

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// decodeRun reads a run's creation body.
func (s *Server) decodeRun(w http.ResponseWriter, r *http.Request) (*runBody, bool) {
	var b runBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return nil, false
	}
	return &b, true
}

// createRun starts a run in the background and answers it at once.
func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decodeRun(w, r)
	if !ok {
		return
	}
	sub, err := s.submit(r.Context(), chi.URLParam(r, "threadID"), b, runtime.AwaitNone)
	if err != nil {
		writeError(w, r, err)
		return
	}
	setRunHeaders(w, sub.Task, false)
	writeJSON(w, http.StatusOK, runOf(sub.Task))
}

// waitRun starts a run and answers its final values once it ended or
// was interrupted (with __interrupt__), or its error as __error__.
func (s *Server) waitRun(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decodeRun(w, r)
	if !ok {
		return
	}
	sub, err := s.submit(r.Context(), chi.URLParam(r, "threadID"), b, runtime.AwaitEnd)
	if err != nil {
		writeError(w, r, err)
		return
	}
	setRunHeaders(w, sub.Task, false)
	t, err := s.rt.Wait(r.Context(), sub.Task.ID)
	if err != nil {
		if r.Context().Err() == nil {
			writeError(w, r, err)
		}
		return
	}
	writeJSON(w, http.StatusOK, s.outcome(r, t))
}

// outcome is what wait and join answer for a run that stopped.
func (s *Server) outcome(r *http.Request, t run.Task) map[string]any {
	return s.outcomeOf(r.Context(), t)
}

// outcomeOf is outcome with ctx.
func (s *Server) outcomeOf(ctx context.Context, t run.Task) map[string]any {
	if t.State == run.StateFailed || t.State == run.StateRejected {
		e := map[string]any{"error": "Error", "message": "the run " + string(t.State)}
		if t.Error != nil {
			e["error"], e["message"] = t.Error.Class, t.Error.Message
		}
		return map[string]any{"__error__": e}
	}
	v := s.source(ctx, t).finalValues()
	if v == nil {
		v = map[string]any{"messages": []lcMessage{}}
	}
	if t.State.Interrupted() {
		v["__interrupt__"] = interruptsOf(t)
	}
	return v
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	if t, ok := s.pathRun(w, r); ok {
		writeJSON(w, http.StatusOK, runOf(t))
	}
}

// listRuns lists a thread's runs, newest first, with limit and offset.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	th, ok := s.pathThread(w, r)
	if !ok {
		return
	}
	limit, offset, err := pageParams(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	runs, err := s.threadRuns(r.Context(), th.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := r.URL.Query().Get("status")
	out := []runJSON{}
	for i := len(runs) - 1; i >= 0; i-- {
		if v := runOf(runs[i]); status == "" || v.Status == status {
			out = append(out, v)
		}
	}
	from := min(offset, len(out))
	writeJSON(w, http.StatusOK, out[from:min(from+limit, len(out))])
}

func pageParams(r *http.Request) (limit, offset int, err error) {
	limit, offset = 10, 0
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
			return 0, 0, badInput("limit", "%q is not a count", v)
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return 0, 0, badInput("offset", "%q is not a count", v)
		}
	}
	return limit, offset, nil
}

// cancelRun cancels the run — with action rollback, also deletes it once
// it stopped — and with wait=1 answers once it stopped.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	switch q.Get("action") {
	case "", "interrupt":
	case "rollback":
		if err := s.rt.RollbackRun(r.Context(), t.ID); err != nil {
			writeError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		writeError(w, r, badInput("action", "%q: want interrupt or rollback", q.Get("action")))
		return
	}
	if _, err := s.rt.Cancel(r.Context(), t.ID); err != nil && !errdefs.IsConflict(err) {
		writeError(w, r, err)
		return
	}
	if q.Get("wait") == "1" || q.Get("wait") == "true" {
		if _, err := s.rt.Wait(r.Context(), t.ID); err != nil {
			writeError(w, r, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteRun deletes a run that is not executing (409 for a pending or
// running one, as LangGraph servers answer), with its checkpoints, events
// and messages.
func (s *Server) deleteRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	if err := s.rt.DeleteRun(r.Context(), t.ID); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// joinRun waits for the run to stop and answers as wait does.
func (s *Server) joinRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	t, err := s.rt.Wait(r.Context(), t.ID)
	if err != nil {
		if r.Context().Err() == nil {
			writeError(w, r, err)
		}
		return
	}
	writeJSON(w, http.StatusOK, s.outcome(r, t))
}

// rollback rolls back the thread's queued and running runs: each is
// canceled, and deleted with its checkpoints, events and messages.
func (s *Server) rollback(ctx context.Context, threadID string) error {
	runs, err := s.rt.ActiveRuns(ctx, threadID)
	if err != nil {
		return err
	}
	for _, t := range runs {
		if err := s.rt.RollbackRun(ctx, t.ID); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	return nil
}
