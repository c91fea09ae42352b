package api

import (
	"net/http"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// AssistantView is one version of a stored assistant, as the REST API
// answers it.
type AssistantView struct {
	ID          string         `json:"id"`
	AgentID     string         `json:"agent_id"`
	Version     int            `json:"version"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	// CreatedAt and UpdatedAt are the assistant's; VersionCreatedAt is
	// when this version was stored.
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
	VersionCreatedAt time.Time `json:"version_created_at"`
}

// AssistantList is a page of assistants (or of one assistant's versions)
// and, for a search, how many match in all.
type AssistantList struct {
	Assistants []AssistantView `json:"assistants"`
	Total      int             `json:"total,omitempty"`
}

func assistantView(a run.Assistant) AssistantView {
	v := AssistantView{ID: a.ID, AgentID: a.AgentID, Version: a.Version, Name: a.Name, Description: a.Description,
		Context: a.Context, Metadata: a.Metadata, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, VersionCreatedAt: a.VersionCreatedAt}
	if v.Context == nil {
		v.Context = map[string]any{}
	}
	if v.Metadata == nil {
		v.Metadata = map[string]any{}
	}
	return v
}

func assistantList(as []run.Assistant, total int) AssistantList {
	out := AssistantList{Assistants: make([]AssistantView, len(as)), Total: total}
	for i, a := range as {
		out.Assistants[i] = assistantView(a)
	}
	return out
}

// assistantBody is the body of POST /v1/assistants and PATCH
// /v1/assistants/{id}; decoded strictly, like every body.
type assistantBody struct {
	ID          string         `json:"id,omitempty"`
	AgentID     string         `json:"agent_id,omitempty"`
	Name        *string        `json:"name,omitempty"`
	Description *string        `json:"description,omitempty"`
	Context     map[string]any `json:"context,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

func (s *Server) createAssistant(w http.ResponseWriter, r *http.Request) {
	var b assistantBody
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.AgentID == "" {
		writeError(w, r, fieldErr("agent_id", errdefs.Validationf("is required: the id of the agent the assistant configures")))
		return
	}
	a := run.Assistant{ID: b.ID, AgentID: b.AgentID, Context: b.Context, Metadata: b.Metadata}
	if b.Name != nil {
		a.Name = *b.Name
	}
	if b.Description != nil {
		a.Description = *b.Description
	}
	out, err := s.rt.CreateAssistant(r.Context(), a)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header()["Location"] = []string{"/v1/assistants/" + out.ID}
	writeJSON(w, http.StatusCreated, assistantView(out))
}

func (s *Server) updateAssistant(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "assistantID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b assistantBody
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.ID != "" {
		writeError(w, r, fieldErr("id", errdefs.Validationf("an assistant's id does not change")))
		return
	}
	out, err := s.rt.UpdateAssistant(r.Context(), id, runtime.AssistantPatch{
		AgentID: b.AgentID, Name: b.Name, Description: b.Description, Context: b.Context, Metadata: b.Metadata,
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, assistantView(out))
}

// getAssistant answers the latest version, or ?version=N.
func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "assistantID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	version, err := countParam("version", r.URL.Query().Get("version"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.rt.GetAssistant(r.Context(), id, version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, assistantView(out))
}

func (s *Server) listAssistants(w http.ResponseWriter, r *http.Request) {
	q, err := assistantQuery(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	q.AgentID, q.Name = r.URL.Query().Get("agent"), r.URL.Query().Get("name")
	page, total, err := s.rt.SearchAssistants(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, assistantList(page, total))
}

func (s *Server) assistantVersions(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "assistantID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	q, err := assistantQuery(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	vs, err := s.rt.AssistantVersions(r.Context(), id, q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, assistantList(vs, 0))
}

func (s *Server) setLatestAssistant(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "assistantID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b struct {
		Version int `json:"version"`
	}
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if b.Version < 1 {
		writeError(w, r, fieldErr("version", errdefs.Validationf("is required: a version number from 1, got %d", b.Version)))
		return
	}
	out, err := s.rt.SetLatestAssistant(r.Context(), id, b.Version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, assistantView(out))
}

func (s *Server) deleteAssistant(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "assistantID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.rt.DeleteAssistant(r.Context(), id); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// assistantQuery reads ?limit= (1 to 1000) and ?offset=.
func assistantQuery(r *http.Request) (run.AssistantQuery, error) {
	limit, err := limitParam(r, 1000)
	if err != nil {
		return run.AssistantQuery{}, err
	}
	offset, err := countParam("offset", r.URL.Query().Get("offset"))
	if err != nil {
		return run.AssistantQuery{}, err
	}
	return run.AssistantQuery{Limit: limit, Offset: offset}, nil
}

// countParam parses the query parameter name, a non-negative integer; 0
// when absent.
func countParam(name, v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fieldErr(name, errdefs.Validationf("must be a non-negative integer, got %q", v))
	}
	return n, nil
}
