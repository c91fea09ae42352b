package agentproto

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// currentState is the thread's state at its newest checkpoint; a thread
// whose runs wrote none (or that has none) shows its transcript.
func (s *Server) currentState(ctx context.Context, threadID string) (stateJSON, error) {
	nodes, err := s.threadNodes(ctx, threadID)
	if err != nil {
		return stateJSON{}, err
	}
	if len(nodes) > 0 {
		return nodes[len(nodes)-1].state(threadID), nil
	}
	page, err := s.rt.ListMessages(ctx, run.MessageQuery{ContextID: threadID, Last: 1000})
	if err != nil {
		return stateJSON{}, err
	}
	msgs := make([]model.Message, len(page.Messages))
	for i, m := range page.Messages {
		msgs[i] = m.Message
	}
	return stateJSON{
		Values: map[string]any{"messages": toLCAll(msgs)}, Next: []string{}, Tasks: []taskJSON{},
		Metadata: map[string]any{}, Interrupts: []interruptJSON{},
	}, nil
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request) {
	th, ok := s.pathThread(w, r)
	if !ok {
		return
	}
	st, err := s.currentState(r.Context(), th.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// stateAt answers the thread's state at checkpoint id.
func (s *Server) stateAt(w http.ResponseWriter, r *http.Request, id string) {
	th, ok := s.pathThread(w, r)
	if !ok {
		return
	}
	nodes, err := s.threadNodes(r.Context(), th.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	for _, n := range nodes {
		if n.id == id {
			writeJSON(w, http.StatusOK, n.state(th.ID))
			return
		}
	}
	writeError(w, r, errdefs.NotFoundf("checkpoint %q not found in thread %q", id, th.ID))
}

func (s *Server) getStateAt(w http.ResponseWriter, r *http.Request) {
	s.stateAt(w, r, chi.URLParam(r, "checkpointID"))
}

func (s *Server) getStateAtBody(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Checkpoint checkpointJSON `json:"checkpoint"`
	}
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Checkpoint.ID == "" {
		writeError(w, r, badInput("checkpoint.checkpoint_id", "is required"))
		return
	}
	s.stateAt(w, r, b.Checkpoint.ID)
}

// updateState refuses writes of values: agentd's engines change their
// state only by running (a run with command.resume answers an interrupt;
// a run with checkpoint_id forks from an earlier state).
func (s *Server) updateState(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.pathThread(w, r); ok {
		writeError(w, r, badInput("values", "writing a thread's state is not served: agentd's engines change state only by running; "+
			"answer an interrupt with a run whose command.resume is the answer, or fork with a run's checkpoint_id"))
	}
}

// historyQuery selects checkpoints, newest first.
type historyQuery struct {
	Limit  int `json:"limit"`
	Before *struct {
		Configurable checkpointJSON `json:"configurable"`
	} `json:"before"`
	Metadata map[string]any `json:"metadata"`
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) {
	var q historyQuery
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			writeError(w, r, badInput("limit", "%q is not a number", v))
			return
		}
		q.Limit = n
	}
	if b := r.URL.Query().Get("before"); b != "" {
		q.Before = &struct {
			Configurable checkpointJSON `json:"configurable"`
		}{checkpointJSON{ID: b}}
	}
	s.history(w, r, q)
}

func (s *Server) postHistory(w http.ResponseWriter, r *http.Request) {
	var q historyQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	s.history(w, r, q)
}

// history answers up to limit checkpoints older than before, newest first,
// of every branch.
func (s *Server) history(w http.ResponseWriter, r *http.Request, q historyQuery) {
	th, ok := s.pathThread(w, r)
	if !ok {
		return
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	nodes, err := s.threadNodes(r.Context(), th.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	end := len(nodes)
	if q.Before != nil && q.Before.Configurable.ID != "" {
		end = -1
		for i, n := range nodes {
			if n.id == q.Before.Configurable.ID {
				end = i
			}
		}
		if end < 0 {
			writeError(w, r, errdefs.WithField("before", errdefs.NotFoundf("checkpoint %q not found in thread %q", q.Before.Configurable.ID, th.ID)))
			return
		}
	}
	out := []stateJSON{}
	for i := end - 1; i >= 0 && len(out) < q.Limit; i-- {
		st := nodes[i].state(th.ID)
		if metadataHolds(st.Metadata, q.Metadata) {
			out = append(out, st)
		}
	}
	writeJSON(w, http.StatusOK, out)
}
