package agentproto

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// An assistant is either an agent's default assistant, one per configured
// agent with a stable id (read-only: it is the configuration file's), or
// a stored assistant the runtime keeps in versions (assistants_write.go).

// assistantNamespace derives the stable assistant id of each agent, as
// LangGraph servers derive the default assistant of each graph.
var assistantNamespace = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// assistantID is agent id's stable assistant id.
func assistantID(agentID string) string {
	return uuid.NewSHA1(assistantNamespace, []byte("agentd/"+agentID)).String()
}

// runAssistantID is the assistant run t ran on: the stored one it was
// sent to, else its agent's default.
func runAssistantID(t run.Task) string {
	if ref, ok := runtime.AssistantOf(t); ok {
		return ref.ID
	}
	return assistantID(t.AgentID)
}

// epoch is the creation time of every default assistant: they are
// configured, not created.
var epoch = time.Unix(0, 0).UTC()

type assistantJSON struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// assistantOf is agent a's default assistant.
func assistantOf(a *runtime.Agent) assistantJSON {
	name := a.Card.Name
	if name == "" {
		name = a.ID
	}
	return assistantJSON{
		AssistantID: assistantID(a.ID), GraphID: a.ID, Name: name, Description: a.Card.Description,
		Config: map[string]any{}, Context: map[string]any{},
		Metadata: map[string]any{"created_by": "system", "card_version": a.Card.Version},
		Version:  1, CreatedAt: epoch, UpdatedAt: epoch,
	}
}

// storedJSON is a stored assistant's version as LangGraph clients read
// it; a version listed among others carries its own creation time.
func storedJSON(a run.Assistant, asVersion bool) assistantJSON {
	out := assistantJSON{
		AssistantID: a.ID, GraphID: a.AgentID, Name: a.Name, Description: a.Description,
		Config: nonNil(a.Config), Context: nonNil(a.Context), Metadata: nonNil(a.Metadata),
		Version: a.Version, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
	if asVersion {
		out.CreatedAt, out.UpdatedAt = a.VersionCreatedAt, a.VersionCreatedAt
	}
	return out
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// defaultAgent finds the agent whose id or default assistant id is id.
func (s *Server) defaultAgent(id string) (*runtime.Agent, bool) {
	if a, err := s.rt.Agent(id); err == nil {
		return a, true
	}
	for _, a := range s.rt.Agents() {
		if assistantID(a.ID) == id {
			return a, true
		}
	}
	return nil, false
}

// agentOf finds the agent an assistant id or graph id names, and the
// stored assistant when id is one ("" for an agent's default).
func (s *Server) agentOf(ctx context.Context, id string) (*runtime.Agent, string, error) {
	if a, ok := s.defaultAgent(id); ok {
		return a, "", nil
	}
	stored, err := s.rt.GetAssistant(ctx, id, 0)
	if errdefs.IsNotFound(err) || errdefs.IsNotAvailable(err) {
		return nil, "", errdefs.NotFoundf("assistant %q not found", id)
	}
	if err != nil {
		return nil, "", err
	}
	a, err := s.rt.Agent(stored.AgentID)
	return a, stored.ID, err
}

func (s *Server) pathAgent(w http.ResponseWriter, r *http.Request) (*runtime.Agent, bool) {
	a, _, err := s.agentOf(r.Context(), chi.URLParam(r, "assistantID"))
	if err != nil {
		writeError(w, r, err)
		return nil, false
	}
	return a, true
}

func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "assistantID")
	if a, ok := s.defaultAgent(id); ok {
		writeJSON(w, http.StatusOK, assistantOf(a))
		return
	}
	a, err := s.rt.GetAssistant(r.Context(), id, 0)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, storedJSON(a, false))
}

type assistantQuery struct {
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
	Limit    int            `json:"limit"`
	Offset   int            `json:"offset"`
}

// defaults returns the default assistants the query selects, in
// configuration order.
func (s *Server) defaults(q assistantQuery) []assistantJSON {
	var out []assistantJSON
	for _, a := range s.rt.Agents() {
		as := assistantOf(a)
		if (q.GraphID == "" || q.GraphID == a.ID) && (q.Name == "" || q.Name == as.Name) && metadataHolds(as.Metadata, q.Metadata) {
			out = append(out, as)
		}
	}
	return out
}

// matching returns one page of the assistants the query selects — the
// default ones first, then the stored ones, newest first — and how many
// match in all.
func (s *Server) matching(ctx context.Context, q assistantQuery) ([]assistantJSON, int, error) {
	defs := s.defaults(q)
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	from := min(max(q.Offset, 0), len(defs))
	page := append([]assistantJSON{}, defs[from:min(from+limit, len(defs))]...)
	stored, total, err := s.rt.SearchAssistants(ctx, run.AssistantQuery{
		AgentID: q.GraphID, Name: q.Name, Metadata: q.Metadata,
		Offset: max(q.Offset-len(defs), 0), Limit: max(limit-len(page), 1),
	})
	if errdefs.IsNotAvailable(err) {
		return page, len(defs), nil // a store without assistants
	}
	if err != nil {
		return nil, 0, err
	}
	for _, a := range stored {
		if len(page) < limit {
			page = append(page, storedJSON(a, false))
		}
	}
	return page, len(defs) + total, nil
}

func (s *Server) searchAssistants(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	page, total, err := s.matching(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if next := max(q.Offset, 0) + len(page); next < total {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(next))
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) countAssistants(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	q.Limit = 1
	_, total, err := s.matching(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, total)
}

// metadataHolds reports whether have holds every key of want with an
// equal value (compared as JSON).
func metadataHolds(have, want map[string]any) bool {
	for k, v := range want {
		h, ok := have[k]
		if !ok || !jsonEqual(h, v) {
			return false
		}
	}
	return true
}
