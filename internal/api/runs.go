package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// sendBody is the body of POST /v1/agents/{id}/messages and
// POST /v1/runs/{id}/input: a full message, or the curl-friendly text
// shorthand.
type sendBody struct {
	Message   *model.Message `json:"message,omitempty"`
	Text      string         `json:"text,omitempty"`
	ContextID string         `json:"context_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Approvals answers an approval prompt (POST /v1/runs/{id}/input):
	// the message becomes a data part {"approvals": […]}.
	Approvals []engine.ApprovalAnswer `json:"approvals,omitempty"`
	// ToolChoice sets this request's tool choice (toolchoice.go).
	ToolChoice string `json:"tool_choice,omitempty"`
	// AssistantID runs the message on a stored assistant of the agent
	// (its latest version); ignored by POST /v1/runs/{id}/input.
	AssistantID string `json:"assistant_id,omitempty"`
}

// checkRaw tells an empty "text" from an absent one, which decoding into a
// string cannot (a *string would cost every send the decoder's fast path).
// It looks at the JSON only when neither member seems given: an error
// either way.
func (b *sendBody) checkRaw(raw []byte) error {
	if b.Message != nil || b.Text != "" || b.Approvals != nil {
		return nil
	}
	var probe struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Text != nil {
		return fieldErr("text", errdefs.Validationf("must not be empty"))
	}
	return nil
}

func (b sendBody) message() (model.Message, error) {
	if b.Approvals != nil {
		return b.approvalMessage()
	}
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
	ID        string        `json:"id"`
	ContextID string        `json:"context_id"`
	AgentID   string        `json:"agent_id"`
	Status    run.TaskState `json:"status"`
	// Outcome qualifies a completed status: "partial" when a workflow
	// completed only some of its steps (metadata.outcome_detail names
	// the others).
	Outcome       string           `json:"outcome,omitempty"`
	StatusMessage *model.Message   `json:"status_message,omitempty"`
	Messages      []model.Message  `json:"messages,omitempty"`
	Artifacts     []model.Artifact `json:"artifacts,omitempty"`
	Usage         model.TokenUsage `json:"usage"`
	// Cost prices the run's usage by model with the configuration's
	// prices (nil when none applies); UnpricedModels names the models
	// without a price (runtime.Runtime.Cost).
	Cost           *float64       `json:"cost,omitempty"`
	UnpricedModels []string       `json:"unpriced_models,omitempty"`
	Error          *run.TaskError `json:"error"`
	Attempt        int            `json:"attempt"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	// PendingApprovals are the tool calls an input-required run waits to
	// have approved (the loop engine's approval prompt).
	PendingApprovals []engine.ApprovalRequest `json:"pending_approvals,omitempty"`
	CreatedAt        time.Time                `json:"created_at"`
	UpdatedAt        time.Time                `json:"updated_at"`
}

func viewOf(t run.Task) RunView {
	return RunView{
		ID: t.ID, ContextID: t.ContextID, AgentID: t.AgentID, Status: restStatus(t),
		StatusMessage: t.StatusMessage, Artifacts: t.Artifacts, Usage: t.Usage, Error: t.Error,
		Attempt: t.Attempt, Metadata: t.Metadata, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		PendingApprovals: pendingApprovals(t), Outcome: runtime.OutcomeOf(t),
	}
}

// view is viewOf t with its cost.
func (s *Server) view(t run.Task) RunView {
	v := viewOf(t)
	v.Cost, v.UnpricedModels = s.rt.Cost(t.ModelUsage)
	return v
}

// fullView adds the run's transcript messages.
func (s *Server) fullView(r *http.Request, t run.Task) (RunView, error) {
	v := s.view(t)
	page, err := s.rt.ListMessages(r.Context(), run.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Limit: 1000})
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
	agentID, err := pathParam(r, "agentID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := s.rt.Agent(agentID); err != nil {
		writeError(w, r, err)
		return
	}
	s.send(w, r, agentID, "")
}

func (s *Server) postInput(w http.ResponseWriter, r *http.Request) {
	t, err := s.pathTask(r)
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
	forkOf(r.Context(), &body)
	msg, err := body.message()
	msg = body.withToolChoice(msg)
	if err == nil && body.Approvals != nil && taskID == "" {
		err = fieldErr("approvals", errors.New("answer a run's approval prompt with POST /v1/runs/{id}/input"))
	}
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
		AgentID: agentID, AssistantID: body.AssistantID, ContextID: body.ContextID, TaskID: taskID, Message: msg, Metadata: body.Metadata,
		Await: awaitOf(stream, wait),
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
		// Opened first, so that the run's log stays here for it.
		st, err := s.rt.OpenStream(r.Context(), t.ID, sub.StartSeq)
		if err != nil {
			writeError(w, r, err)
			return
		}
		defer st.Close()
		if sub.Durable(r.Context()) != nil {
			return // the client left; the run goes on
		}
		streamRun(r.Context(), startSSE(w, http.StatusOK), st, s.opts.Heartbeat, true)
	case !wait:
		v := s.view(t)
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
		v := s.view(t)
		v.Messages = msgs
		writeRunView(w, http.StatusOK, &v)
	}
}

// awaitOf is how a send's client takes the run's answer.
func awaitOf(stream, wait bool) runtime.Await {
	switch {
	case stream:
		return runtime.AwaitStream
	case wait:
		return runtime.AwaitEnd
	}
	return runtime.AwaitNone
}

// pathTask returns the run the path names.
func (s *Server) pathTask(r *http.Request) (run.Task, error) {
	runID, err := pathParam(r, "runID")
	if err != nil {
		return run.Task{}, err
	}
	return s.rt.GetTask(r.Context(), runID)
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	t, err := s.pathTask(r)
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

// getTrajectory answers the run's trajectory: its model and tool calls.
func (s *Server) getTrajectory(w http.ResponseWriter, r *http.Request) {
	t, err := s.pathTask(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	tr, err := s.rt.Trajectory(r.Context(), t.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if tr.Steps == nil {
		tr.Steps = []runtime.TrajectoryStep{}
	}
	writeJSON(w, http.StatusOK, tr)
}

// RunList is a page of runs.
type RunList struct {
	Runs       []RunView `json:"runs"`
	NextCursor string    `json:"next_cursor"`
	Total      int       `json:"total"`
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tq := run.TaskQuery{ContextID: q.Get("context"), AgentID: q.Get("agent"), Cursor: q.Get("cursor")}
	for _, st := range q["status"] {
		for _, one := range strings.Split(st, ",") {
			state := run.TaskState(one)
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
	page, err := s.rt.ListTasks(r.Context(), tq)
	if err != nil {
		// The filters and limit were checked above: a query the store
		// still refuses has a cursor it did not issue.
		if errdefs.IsValidation(err) && tq.Cursor != "" {
			err = fieldErr("cursor", errdefs.Validationf("%q is not a cursor this server issued; pass a previous page's next_cursor", tq.Cursor))
		}
		writeError(w, r, err)
		return
	}
	out := RunList{Runs: make([]RunView, len(page.Tasks)), NextCursor: page.NextCursor, Total: page.Total}
	for i, t := range page.Tasks {
		out.Runs[i] = s.view(t)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	runID, err := pathParam(r, "runID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.rt.Cancel(r.Context(), runID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if !t.State.Terminal() {
		status = http.StatusAccepted // cancel requested; the run is stopping
	}
	v := s.view(t)
	writeRunView(w, status, &v)
}

// runEvents streams a run's events from ?after= or Last-Event-ID.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	st, err := s.openEvents(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer st.Close()
	streamRun(r.Context(), startSSE(w, http.StatusOK), st, s.opts.Heartbeat, false)
}

// runEventsHead answers HEAD as GET would start (the same checks, the
// stream's headers), then returns instead of following the run: HEAD
// drops the body, and the stream would not end before the run does.
func (s *Server) runEventsHead(w http.ResponseWriter, r *http.Request) {
	st, err := s.openEvents(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	st.Close()
	setSSEHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
}

// openEvents opens the stream of the run the path names, from the resume
// point of the request.
func (s *Server) openEvents(r *http.Request) (*runtime.Stream, error) {
	runID, err := pathParam(r, "runID")
	if err != nil {
		return nil, err
	}
	after, source, err := cursorParam(r)
	if err != nil {
		return nil, err
	}
	st, err := s.rt.OpenStream(r.Context(), runID, after)
	if err != nil && errdefs.IsValidation(err) {
		err = fieldErr(source, err)
	}
	return st, err
}

// MessageList is a page of a transcript.
type MessageList struct {
	Messages  []run.Message `json:"messages"`
	NextAfter int64         `json:"next_after"`
}

func (s *Server) contextMessages(w http.ResponseWriter, r *http.Request) {
	q, err := messageQuery(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	page, err := s.rt.ListMessages(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if len(page.Messages) == 0 {
		// Past the end of a transcript, or no transcript at all?
		known := q.After > 0
		if known {
			last, err := s.rt.ListMessages(r.Context(), run.MessageQuery{ContextID: q.ContextID, Last: 1})
			if err != nil {
				writeError(w, r, err)
				return
			}
			known = len(last.Messages) > 0
		}
		if !known {
			writeError(w, r, errdefs.NotFoundf("context %q not found", q.ContextID))
			return
		}
		page.Messages = []run.Message{} // "messages": [], not null
	}
	writeJSON(w, http.StatusOK, MessageList{Messages: page.Messages, NextAfter: page.NextAfter})
}

// messageQuery reads the transcript page a request asks for.
func messageQuery(r *http.Request) (run.MessageQuery, error) {
	id, err := pathParam(r, "contextID")
	if err != nil {
		return run.MessageQuery{}, err
	}
	q := run.MessageQuery{ContextID: id}
	if v := r.URL.Query().Get("after"); v != "" {
		if q.After, err = seqParam("after", v, "position"); err != nil {
			return q, err
		}
	}
	q.Limit, err = limitParam(r, 1000)
	return q, err
}
