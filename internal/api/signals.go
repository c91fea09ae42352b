package api

import (
	"net/http"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// StatusPaused is the status REST shows for a run a user paused: the
// store keeps it as input-required with a paused status message
// (runtime.Paused), which is what A2A clients see.
const StatusPaused run.TaskState = "paused"

// restStatus is the status of t as REST shows it.
func restStatus(t run.Task) run.TaskState {
	if runtime.Paused(t) {
		return StatusPaused
	}
	return t.State
}

// signalBody is the body of POST /v1/runs/{id}/signals.
type signalBody struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// postSignal steers a run: pause, resume, feedback, retry or cancel. The
// answer is the run: 200 when the signal left it finished or paused, 202
// when it goes on (a pause then takes effect at its next checkpoint).
func (s *Server) postSignal(w http.ResponseWriter, r *http.Request) {
	runID, err := pathParam(r, "runID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	var body signalBody
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &body); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.rt.Signal(r.Context(), runID, runtime.Signal{Type: body.Type, Text: body.Text})
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusAccepted
	if t.State.Terminal() || runtime.Paused(t) {
		status = http.StatusOK
	}
	v := s.view(t)
	writeRunView(w, status, &v)
}
