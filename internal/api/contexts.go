package api

import (
	"net/http"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/runtime"
)

// ContextView is a conversation as GET /v1/contexts lists it.
type ContextView struct {
	ID string `json:"id"`
	// AgentID is the agent of the conversation's newest run.
	AgentID string `json:"agent_id"`
	// Title is the start of the conversation's first message.
	Title string `json:"title"`
	// Runs counts the conversation's runs.
	Runs int `json:"runs"`
	// LastRun is the conversation's newest run, without its transcript.
	LastRun   RunView   `json:"last_run"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ContextList is a page of conversations.
type ContextList struct {
	Contexts   []ContextView `json:"contexts"`
	NextCursor string        `json:"next_cursor"`
}

// listContexts answers the caller's conversations, newest first.
func (s *Server) listContexts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := limitParam(r, 100)
	if err != nil {
		writeError(w, r, err)
		return
	}
	cq := runtime.ContextQuery{AgentID: q.Get("agent"), Cursor: q.Get("cursor"), Limit: limit}
	page, err := s.rt.ListContexts(r.Context(), cq)
	if err != nil {
		if errdefs.IsValidation(err) && cq.Cursor != "" {
			err = fieldErr("cursor", errdefs.Validationf("%q is not a cursor this server issued; pass a previous page's next_cursor", cq.Cursor))
		}
		writeError(w, r, err)
		return
	}
	out := ContextList{Contexts: make([]ContextView, len(page.Contexts)), NextCursor: page.NextCursor}
	for i, c := range page.Contexts {
		out.Contexts[i] = ContextView{
			ID: c.ID, AgentID: c.Latest.AgentID, Title: c.Title, Runs: c.Runs,
			LastRun: s.view(c.Latest), UpdatedAt: c.Latest.UpdatedAt,
		}
	}
	writeJSON(w, http.StatusOK, out)
}
