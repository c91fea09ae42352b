package agentproto

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// The writes of stored assistants: each goes to the runtime, which checks
// an assistant's context against its agent (what the configuration file
// would refuse is refused, naming the member) before anything is stored.

// assistantBody is the body of POST /assistants and PATCH
// /assistants/{id}.
type assistantBody struct {
	GraphID     string         `json:"graph_id"`
	AssistantID string         `json:"assistant_id"`
	IfExists    string         `json:"if_exists"`
	Name        *string        `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
}

func (s *Server) createAssistant(w http.ResponseWriter, r *http.Request) {
	var b assistantBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.GraphID == "" {
		writeError(w, r, badInput("graph_id", "is required: the id of the agent the assistant configures"))
		return
	}
	switch b.IfExists {
	case "", "raise", "do_nothing":
	default:
		writeError(w, r, badInput("if_exists", "%q is not one of raise, do_nothing", b.IfExists))
		return
	}
	if b.AssistantID != "" {
		if _, ok := s.defaultAgent(b.AssistantID); ok {
			writeError(w, r, errdefs.WithField("assistant_id", errdefs.Conflictf("%q names an agent or its default assistant", b.AssistantID)))
			return
		}
	}
	a := run.Assistant{ID: b.AssistantID, AgentID: b.GraphID, Config: b.Config, Context: b.Context, Metadata: b.Metadata}
	if b.Name != nil {
		a.Name = *b.Name
	}
	if b.Description != nil {
		a.Description = *b.Description
	}
	out, err := s.rt.CreateAssistant(r.Context(), a)
	if errdefs.IsConflict(err) && b.IfExists == "do_nothing" && b.AssistantID != "" {
		out, err = s.rt.GetAssistant(r.Context(), b.AssistantID, 0)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, storedJSON(out, false))
}

// storedID is the path's assistant id, refused when it names a default
// assistant, which the configuration file owns.
func (s *Server) storedID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := chi.URLParam(r, "assistantID")
	if a, ok := s.defaultAgent(id); ok {
		writeError(w, r, errdefs.Conflictf("assistant %s is agent %q's default, which the server's configuration file defines; "+
			"create an assistant with graph_id %q to configure it", id, a.ID, a.ID))
		return "", false
	}
	return id, true
}

func (s *Server) updateAssistant(w http.ResponseWriter, r *http.Request) {
	id, ok := s.storedID(w, r)
	if !ok {
		return
	}
	var b assistantBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.rt.UpdateAssistant(r.Context(), id, runtime.AssistantPatch{
		AgentID: b.GraphID, Name: b.Name, Description: b.Description,
		Context: b.Context, Config: b.Config, Metadata: b.Metadata,
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, storedJSON(out, false))
}

// deleteAssistant deletes a stored assistant. delete_threads=true is
// refused: threads are not an assistant's in agentd (any assistant may run
// on any thread), so there is nothing that is only its to delete.
func (s *Server) deleteAssistant(w http.ResponseWriter, r *http.Request) {
	id, ok := s.storedID(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Get("delete_threads") == "true" {
		writeError(w, r, badInput("delete_threads", "threads do not belong to an assistant here; delete them with DELETE /threads/{thread_id}"))
		return
	}
	if err := s.rt.DeleteAssistant(r.Context(), id); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// assistantVersions lists a stored assistant's versions, newest first; a
// default assistant has its one.
func (s *Server) assistantVersions(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "assistantID")
	if a, ok := s.defaultAgent(id); ok {
		writeJSON(w, http.StatusOK, []assistantJSON{assistantOf(a)})
		return
	}
	var q assistantQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	vs, err := s.rt.AssistantVersions(r.Context(), id, run.AssistantQuery{Metadata: q.Metadata, Offset: q.Offset, Limit: q.Limit})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]assistantJSON, len(vs))
	for i, v := range vs {
		out[i] = storedJSON(v, true)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) setLatestAssistant(w http.ResponseWriter, r *http.Request) {
	id, ok := s.storedID(w, r)
	if !ok {
		return
	}
	var b struct {
		Version *int `json:"version"`
	}
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Version == nil || *b.Version < 1 {
		writeError(w, r, badInput("version", "is required: a version number from 1"))
		return
	}
	out, err := s.rt.SetLatestAssistant(r.Context(), id, *b.Version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, storedJSON(out, false))
}
