package api

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/runtime"
	"agentd/internal/store"
)

// sendBody is the body of POST /v1/agents/{id}/messages and
// POST /v1/runs/{id}/input: a full message, or the curl-friendly text
// shorthand.
type sendBody struct {
	Message   *model.Message `json:"message,omitempty"`
	Text      string         `json:"text,omitempty"`
	ContextID string         `json:"context_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

func (b sendBody) message() (model.Message, error) {
	switch {
	case b.Message != nil && b.Text != "":
		return model.Message{}, fieldErr("text", errors.New(`give either "message" or "text", not both`))
	case b.Message != nil:
		return *b.Message, nil
	case b.Text != "":
		return model.NewText(model.RoleUser, b.Text), nil
	}
	return model.Message{}, fieldErr("message", errors.New(`required: give "message" (with parts) or "text"`))
}

// RunView is a run as the API shows it.
type RunView struct {
	ID            string           `json:"id"`
	ContextID     string           `json:"context_id"`
	AgentID       string           `json:"agent_id"`
	Status        store.TaskState  `json:"status"`
	StatusMessage *model.Message   `json:"status_message,omitempty"`
	Messages      []model.Message  `json:"messages,omitempty"`
	Artifacts     []model.Artifact `json:"artifacts,omitempty"`
	Usage         model.TokenUsage `json:"usage"`
	Error         *store.TaskError `json:"error"`
	Attempt       int              `json:"attempt"`
	Metadata      map[string]any   `json:"metadata,omitempty"`
	CreatedAt     time.Time        `json:"created_at"`
	UpdatedAt     time.Time        `json:"updated_at"`
}

func viewOf(t store.Task) RunView {
	return RunView{
		ID: t.ID, ContextID: t.ContextID, AgentID: t.AgentID, Status: t.State,
		StatusMessage: t.StatusMessage, Artifacts: t.Artifacts, Usage: t.Usage, Error: t.Error,
		Attempt: t.Attempt, Metadata: t.Metadata, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
}

// fullView adds the run's transcript messages.
func (s *Server) fullView(r *http.Request, t store.Task) (RunView, error) {
	v := viewOf(t)
	page, err := s.rt.Store().ListMessages(r.Context(), store.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Limit: 1000})
	if err != nil {
		return v, err
	}
	v.Messages = make([]model.Message, len(page.Messages))
	for i, m := range page.Messages {
		v.Messages[i] = m.Message
	}
	return v, nil
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	agentID := chi.URLParam(r, "agentID")
	if _, err := s.rt.Agent(agentID); err != nil {
		writeError(w, r, err)
		return
	}
	s.send(w, r, agentID, "")
}

func (s *Server) postInput(w http.ResponseWriter, r *http.Request) {
	t, err := s.rt.Store().GetTask(r.Context(), chi.URLParam(r, "runID"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.send(w, r, t.AgentID, t.ID)
}

// send submits a message and answers as the query asks: blocking (default),
// ?stream=true (SSE) or ?wait=false (202 at once).
func (s *Server) send(w http.ResponseWriter, r *http.Request, agentID, taskID string) {
	var q url.Values // nil, and no parse, without a query
	if r.URL.RawQuery != "" {
		q = r.URL.Query()
	}
	stream, err := boolParam(q, "stream", false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	wait, err := boolParam(q, "wait", true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var body sendBody
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &body); err != nil {
		writeError(w, r, err)
		return
	}
	msg, err := body.message()
	if err != nil {
		writeError(w, r, err)
		return
	}
	if field, err := runtime.CheckUserMessage(msg); err != nil {
		if body.Message == nil {
			field = "text"
		}
		writeError(w, r, fieldErr(field, err))
		return
	}
	sub, err := s.rt.Send(r.Context(), runtime.SendRequest{
		AgentID: agentID, ContextID: body.ContextID, TaskID: taskID, Message: msg, Metadata: body.Metadata,
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	t := sub.Task
	// Set directly: "Location" is already in canonical form.
	w.Header()["Location"] = []string{"/v1/runs/" + t.ID}
	switch {
	case stream:
		st, err := s.rt.OpenStream(r.Context(), t.ID, sub.StartSeq)
		if err != nil {
			writeError(w, r, err)
			return
		}
		defer st.Close()
		streamRun(r.Context(), startSSE(w, http.StatusOK), st, s.opts.Heartbeat, true)
	case !wait:
		v := viewOf(t)
		writeRunView(w, http.StatusAccepted, &v)
	default:
		t, msgs, err := s.rt.WaitView(r.Context(), t.ID)
		if err != nil {
			if r.Context().Err() != nil {
				return // the client left; the run goes on
			}
			writeError(w, r, err)
			return
		}
		v := viewOf(t)
		v.Messages = msgs
		writeRunView(w, http.StatusOK, &v)
	}
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	t, err := s.rt.Store().GetTask(r.Context(), chi.URLParam(r, "runID"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	v, err := s.fullView(r, t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeRunView(w, http.StatusOK, &v)
}

// RunList is a page of runs.
type RunList struct {
	Runs       []RunView `json:"runs"`
	NextCursor string    `json:"next_cursor"`
	Total      int       `json:"total"`
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tq := store.TaskQuery{ContextID: q.Get("context"), AgentID: q.Get("agent"), Cursor: q.Get("cursor")}
	for _, st := range q["status"] {
		for _, one := range strings.Split(st, ",") {
			state := store.TaskState(one)
			if !state.Valid() {
				writeError(w, r, fieldErr("status", errdefs.Validationf("unknown status %q (want submitted, working, input-required, auth-required, completed, failed, canceled or rejected)", one)))
				return
			}
			tq.States = append(tq.States, state)
		}
	}
	limit, err := limitParam(r, 100)
	if err != nil {
		writeError(w, r, err)
		return
	}
	tq.Limit = limit
	page, err := s.rt.Store().ListTasks(r.Context(), tq)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := RunList{Runs: make([]RunView, len(page.Tasks)), NextCursor: page.NextCursor, Total: page.Total}
	for i, t := range page.Tasks {
		out.Runs[i] = viewOf(t)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	t, err := s.rt.Cancel(r.Context(), chi.URLParam(r, "runID"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if !t.State.Terminal() {
		status = http.StatusAccepted // cancel requested; the run is stopping
	}
	v := viewOf(t)
	writeRunView(w, status, &v)
}

// runEvents streams a run's events from ?after= or Last-Event-ID.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	after, source, err := cursorParam(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	st, err := s.rt.OpenStream(r.Context(), chi.URLParam(r, "runID"), after)
	if err != nil {
		if errdefs.IsValidation(err) {
			err = fieldErr(source, err)
		}
		writeError(w, r, err)
		return
	}
	defer st.Close()
	streamRun(r.Context(), startSSE(w, http.StatusOK), st, s.opts.Heartbeat, false)
}

// cursorParam reads the resume point and where it came from: ?after= wins
// over Last-Event-ID.
func cursorParam(r *http.Request) (int64, string, error) {
	name, v := "after", r.URL.Query().Get("after")
	if v == "" {
		name, v = "Last-Event-ID", r.Header.Get("Last-Event-ID")
	}
	if v == "" {
		return 0, name, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, name, fieldErr(name, errdefs.Validationf("must be a non-negative event seq, got %q", v))
	}
	return n, name, nil
}

// MessageList is a page of a transcript.
type MessageList struct {
	Messages  []store.Message `json:"messages"`
	NextAfter int64           `json:"next_after"`
}

func (s *Server) contextMessages(w http.ResponseWriter, r *http.Request) {
	q := store.MessageQuery{ContextID: chi.URLParam(r, "contextID")}
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, r, fieldErr("after", errdefs.Validationf("must be a non-negative position, got %q", v)))
			return
		}
		q.After = n
	}
	limit, err := limitParam(r, 1000)
	if err != nil {
		writeError(w, r, err)
		return
	}
	q.Limit = limit
	page, err := s.rt.Store().ListMessages(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if len(page.Messages) == 0 && q.After == 0 {
		writeError(w, r, errdefs.NotFoundf("context %q not found", q.ContextID))
		return
	}
	writeJSON(w, http.StatusOK, MessageList{Messages: page.Messages, NextAfter: page.NextAfter})
}

// limitParam reads ?limit= (1 to max); 0 when absent lets the store pick
// its default.
func limitParam(r *http.Request, max int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, fieldErr("limit", errdefs.Validationf("must be an integer from 1 to %d, got %q", max, v))
	}
	return n, nil
}

func boolParam(q url.Values, name string, def bool) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fieldErr(name, errdefs.Validationf("must be true or false, got %q", v))
	}
	return b, nil
}
