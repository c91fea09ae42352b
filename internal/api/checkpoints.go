package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// checkpointView is one checkpoint of a run as the API lists it: the id a
// fork names, where the engine was, and the conversation on its board.
type checkpointView struct {
	ID        string          `json:"id"`
	N         int             `json:"n"`
	Step      string          `json:"step,omitempty"`
	Iteration int             `json:"iteration,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	Messages  []model.Message `json:"messages"`
	// Vars are the board's variables: a workflow's shared memory
	// (shared_memory), what a flow collected.
	Vars map[string]any `json:"vars,omitempty"`
}

// listCheckpoints answers the run's checkpoint history, oldest first.
func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	t, cps, err := s.pathCheckpoints(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]checkpointView, 0, len(cps))
	for i, cp := range cps {
		v := checkpointView{ID: runtime.CheckpointRef{RunID: t.ID, N: i + 1}.String(), N: i + 1, Step: cp.Step, Iteration: cp.Iteration, CreatedAt: cp.Timestamp, Messages: []model.Message{}}
		if cp.Board != nil && cp.Board.Channels[engine.MainChannel] != nil {
			v.Messages = cp.Board.Channels[engine.MainChannel]
		}
		if cp.Board != nil && len(cp.Board.Vars) > 0 {
			v.Vars = cp.Board.Vars
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoints": out})
}

// pathCheckpoints is the run the path names and its checkpoint history.
func (s *Server) pathCheckpoints(r *http.Request) (run.Task, []engine.Checkpoint, error) {
	t, err := s.pathTask(r)
	if err != nil {
		return t, nil, err
	}
	cps, err := s.rt.RunCheckpoints(r.Context(), t.ID)
	return t, cps, err
}

// forkKey carries a fork's context and checkpoint from forkRun to send.
type forkKey struct{}

type fork struct {
	contextID, checkpoint string
}

// forkRun sends a message that continues run's conversation from one of
// its checkpoints (?checkpoint=n, default its newest) instead of from the
// conversation's end: time travel. It answers as a send does (blocking,
// ?stream=true, ?wait=false); the new run is in the same context.
func (s *Server) forkRun(w http.ResponseWriter, r *http.Request) {
	t, cps, err := s.pathCheckpoints(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	n := len(cps)
	if v := r.URL.Query().Get("checkpoint"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > len(cps) {
			writeError(w, r, fieldErr("checkpoint", errdefs.Validationf("%q: run %s has checkpoints 1 to %d", v, t.ID, len(cps))))
			return
		}
	}
	if n == 0 {
		writeError(w, r, errdefs.Conflictf("run %s has no checkpoint to fork from", t.ID))
		return
	}
	ref := runtime.CheckpointRef{RunID: t.ID, N: n}.String()
	ctx := context.WithValue(r.Context(), forkKey{}, fork{contextID: t.ContextID, checkpoint: ref})
	s.send(w, r.WithContext(ctx), t.AgentID, "")
}

// forkOf applies the fork forkRun put in ctx, if any, to a send's body.
func forkOf(ctx context.Context, b *sendBody) {
	f, ok := ctx.Value(forkKey{}).(fork)
	if !ok {
		return
	}
	md := make(map[string]any, len(b.Metadata)+3)
	for k, v := range b.Metadata {
		md[k] = v
	}
	md[runtime.MetaForkFrom], md[runtime.MetaForkReplay], md[runtime.MetaKeepCheckpoints] = f.checkpoint, true, true
	b.ContextID, b.Metadata = f.contextID, md
}
