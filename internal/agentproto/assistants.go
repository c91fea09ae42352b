package agentproto

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"agentd/internal/errdefs"
	"agentd/internal/runtime"
)

// assistantNamespace derives the stable assistant id of each agent, as
// LangGraph servers derive the default assistant of each graph.
var assistantNamespace = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// assistantID is agent id's stable assistant id.
func assistantID(agentID string) string {
	return uuid.NewSHA1(assistantNamespace, []byte("agentd/"+agentID)).String()
}

// epoch is the creation time of every assistant: they are configured,
// not created.
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

// agentOf finds the agent an assistant id or graph id names.
func (s *Server) agentOf(id string) (*runtime.Agent, error) {
	if a, err := s.rt.Agent(id); err == nil {
		return a, nil
	}
	for _, a := range s.rt.Agents() {
		if assistantID(a.ID) == id {
			return a, nil
		}
	}
	return nil, errdefs.NotFoundf("assistant %q not found", id)
}

func (s *Server) pathAgent(w http.ResponseWriter, r *http.Request) (*runtime.Agent, bool) {
	a, err := s.agentOf(chi.URLParam(r, "assistantID"))
	if err != nil {
		writeError(w, r, err)
		return nil, false
	}
	return a, true
}

func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.pathAgent(w, r); ok {
		writeJSON(w, http.StatusOK, assistantOf(a))
	}
}

type assistantQuery struct {
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
	Limit    int            `json:"limit"`
	Offset   int            `json:"offset"`
}

// matching returns the assistants the query selects, in configuration
// order.
func (s *Server) matching(q assistantQuery) []assistantJSON {
	var out []assistantJSON
	for _, a := range s.rt.Agents() {
		as := assistantOf(a)
		if (q.GraphID == "" || q.GraphID == a.ID) && (q.Name == "" || q.Name == as.Name) && metadataHolds(as.Metadata, q.Metadata) {
			out = append(out, as)
		}
	}
	return out
}

func (s *Server) searchAssistants(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	all := s.matching(q)
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	from := min(max(q.Offset, 0), len(all))
	to := min(from+limit, len(all))
	if to < len(all) {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(to))
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(len(all)))
	writeJSON(w, http.StatusOK, append([]assistantJSON{}, all[from:to]...))
}

func (s *Server) countAssistants(w http.ResponseWriter, r *http.Request) {
	var q assistantQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, len(s.matching(q)))
}

// assistantVersions lists the one version a configured assistant has.
func (s *Server) assistantVersions(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.pathAgent(w, r); ok {
		writeJSON(w, http.StatusOK, []assistantJSON{assistantOf(a)})
	}
}

// readOnlyAssistants refuses writes: the assistants are the configured
// agents.
func readOnlyAssistants(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, POST")
	writeDetail(w, http.StatusMethodNotAllowed, "assistants are the agents of the server's configuration and are read-only here: "+
		r.Method+" "+r.URL.Path+" is not served; change the configuration file instead")
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
