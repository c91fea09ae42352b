package agentproto

import (
	"net/http"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// createBatch starts stateless runs in the background, one per body, and
// answers them in order. A bad body refuses the batch before any starts.
func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) {
	var bodies []*runBody
	if err := s.decodeBody(w, r, &bodies); err != nil {
		writeError(w, r, err)
		return
	}
	for _, b := range bodies {
		if err := b.check(); err != nil {
			writeError(w, r, err)
			return
		}
	}
	out := make([]runJSON, 0, len(bodies))
	for _, b := range bodies {
		sub, err := s.submit(r.Context(), "", b, runtime.AwaitNone)
		if err != nil {
			writeError(w, r, err)
			return
		}
		out = append(out, runOf(sub.Task))
	}
	writeJSON(w, http.StatusOK, out)
}

// cancelMany cancels the runs named, or a thread's (or the caller's) runs
// in a status: pending, running or all of those still going.
func (s *Server) cancelMany(w http.ResponseWriter, r *http.Request) {
	var b struct {
		ThreadID string   `json:"thread_id"`
		RunIDs   []string `json:"run_ids"`
		Status   string   `json:"status"`
	}
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if a := r.URL.Query().Get("action"); a != "" && a != "interrupt" {
		writeError(w, r, badInput("action", "%q: only interrupt is served (runs are never deleted)", a))
		return
	}
	ids, err := s.runsToCancel(r, b.ThreadID, b.RunIDs, b.Status)
	if err != nil {
		writeError(w, r, err)
		return
	}
	for _, id := range ids {
		if _, err := s.rt.Cancel(r.Context(), id); err != nil && !errdefs.IsConflict(err) {
			writeError(w, r, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// runsToCancel resolves cancelMany's selection, checking each named run
// (404 for another tenant's or another thread's).
func (s *Server) runsToCancel(r *http.Request, threadID string, runIDs []string, status string) ([]string, error) {
	var states []run.TaskState
	switch status {
	case "pending":
		states = []run.TaskState{run.StateSubmitted}
	case "running":
		states = []run.TaskState{run.StateWorking}
	case "all", "":
		states = []run.TaskState{run.StateSubmitted, run.StateWorking, run.StateInputRequired, run.StateAuthRequired}
	default:
		return nil, badInput("status", "%q: want pending, running or all", status)
	}
	if len(runIDs) > 0 {
		for _, id := range runIDs {
			t, err := s.rt.GetTask(r.Context(), id)
			if err == nil && threadID != "" && t.ContextID != threadID {
				err = errdefs.NotFoundf("run %q not found in thread %q", id, threadID)
			}
			if err != nil {
				return nil, err
			}
		}
		return runIDs, nil
	}
	if threadID == "" && status == "" {
		return nil, badInput("run_ids", "name runs, a thread, or a status")
	}
	var ids []string
	q := run.TaskQuery{ContextID: threadID, States: states, Limit: 100}
	for {
		page, err := s.rt.ListTasks(r.Context(), q)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tasks {
			ids = append(ids, t.ID)
		}
		if page.NextCursor == "" {
			return ids, nil
		}
		q.Cursor = page.NextCursor
	}
}

// pruneThreads deletes threads (strategy delete); keep_latest, which
// prunes a thread's checkpoints, is not served.
func (s *Server) pruneThreads(w http.ResponseWriter, r *http.Request) {
	var b struct {
		ThreadIDs []string `json:"thread_ids"`
		Strategy  string   `json:"strategy"`
	}
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Strategy != "" && b.Strategy != "delete" {
		writeError(w, r, badInput("strategy", "%q: only delete is served (checkpoints are pruned with their runs by retention)", b.Strategy))
		return
	}
	n := 0
	for _, id := range b.ThreadIDs {
		err := s.rt.DeleteThread(r.Context(), id)
		if errdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		n++
	}
	writeJSON(w, http.StatusOK, map[string]int{"pruned_count": n})
}
