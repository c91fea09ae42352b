package agentproto

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// Crons are the runtime's schedules (runtime.CreateSchedule): a cron of
// an assistant is a schedule of its agent; one created for a thread runs
// into that conversation (queued behind its running run, if any), one
// without a thread starts a new conversation per tick. Each tick is an
// ordinary run whose metadata carries schedule_id (and schedule_tick).

// cronBody is a cron's creation (CronCreate): a run's body, plus the
// schedule's own members.
type cronBody struct {
	runBody
	Schedule       string     `json:"schedule"`
	Timezone       string     `json:"timezone"`
	EndTime        *time.Time `json:"end_time"`
	Enabled        *bool      `json:"enabled"`
	OnRunCompleted string     `json:"on_run_completed"`
}

// check refuses what a cron does not serve, naming the member.
func (b *cronBody) check() error {
	if err := b.runBody.check(); err != nil {
		return err
	}
	switch {
	case b.Schedule == "":
		return badInput("schedule", "is required (a cron expression such as \"0 9 * * 1-5\")")
	case b.Enabled != nil && !*b.Enabled:
		return badInput("enabled", "a disabled cron is not served: create it when it should run, delete it to stop it")
	case b.OnRunCompleted != "" && b.OnRunCompleted != "keep" && b.OnRunCompleted != "delete":
		return badInput("on_run_completed", "%q: want keep or delete", b.OnRunCompleted)
	case b.Webhook != "":
		return badInput("webhook", "is not served on crons; give each run's webhook on runs.create")
	case b.MultitaskStrategy != "" && b.MultitaskStrategy != "enqueue":
		return badInput("multitask_strategy", "%q: a cron's run waits for the thread's running run (enqueue)", b.MultitaskStrategy)
	case b.AfterSeconds > 0:
		return badInput("after_seconds", "is not served on crons: the schedule says when")
	case b.Command != nil || b.forkFrom() != "":
		return badInput("command", "a cron starts new runs; it neither resumes nor forks")
	}
	return nil
}

// cronJSON is a cron as LangGraph clients read it (Cron).
type cronJSON struct {
	CronID         string         `json:"cron_id"`
	AssistantID    string         `json:"assistant_id"`
	ThreadID       *string        `json:"thread_id"`
	OnRunCompleted string         `json:"on_run_completed"`
	EndTime        *time.Time     `json:"end_time"`
	Schedule       string         `json:"schedule"`
	Timezone       *string        `json:"timezone"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	Payload        map[string]any `json:"payload"`
	UserID         *string        `json:"user_id"`
	NextRunDate    *time.Time     `json:"next_run_date"`
	Metadata       map[string]any `json:"metadata"`
	Enabled        bool           `json:"enabled"`
}

func cronOf(s run.Schedule) cronJSON {
	assistant := assistantID(s.AgentID)
	if s.AssistantID != "" {
		assistant = s.AssistantID
	}
	out := cronJSON{
		CronID: s.ID, AssistantID: assistant, OnRunCompleted: "keep", EndTime: s.EndAt, Schedule: s.Cron,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, NextRunDate: s.NextFireAt, Metadata: s.Metadata, Enabled: s.NextFireAt != nil,
		Payload: map[string]any{"assistant_id": assistant,
			"input": map[string]any{"messages": []lcMessage{toLC(s.Input)}}},
	}
	if s.ContextID != "" {
		out.ThreadID = &s.ContextID
	}
	if s.TimeZone != "" {
		out.Timezone = &s.TimeZone
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	return out
}

func (s *Server) createCron(w http.ResponseWriter, r *http.Request) {
	s.answerCron(w, r, "")
}

func (s *Server) createThreadCron(w http.ResponseWriter, r *http.Request) {
	threadID := chi.URLParam(r, "threadID")
	if _, err := s.rt.GetThread(r.Context(), threadID); err != nil {
		writeError(w, r, err)
		return
	}
	s.answerCron(w, r, threadID)
}

// answerCron creates the cron the body asks for, on threadID ("" for a
// cron whose runs each start a conversation).
func (s *Server) answerCron(w http.ResponseWriter, r *http.Request, threadID string) {
	var b cronBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	sc, err := s.cronSchedule(r.Context(), &b, threadID)
	if err == nil {
		sc, err = s.rt.CreateSchedule(r.Context(), sc)
	}
	if err != nil {
		writeError(w, r, protocolField(err))
		return
	}
	writeJSON(w, http.StatusOK, cronOf(sc))
}

// cronSchedule is the schedule body b asks for.
func (s *Server) cronSchedule(ctx context.Context, b *cronBody, threadID string) (run.Schedule, error) {
	if err := b.check(); err != nil {
		return run.Schedule{}, err
	}
	a, stored, err := s.agentOf(ctx, b.AssistantID)
	if err != nil {
		return run.Schedule{}, err
	}
	rc, err := b.parseConfig()
	if err != nil {
		return run.Schedule{}, err
	}
	msg, err := userMessage(b.Input)
	if err != nil {
		return run.Schedule{}, err
	}
	md := make(map[string]any, len(b.Metadata))
	for k, v := range b.Metadata {
		md[k] = v
	}
	msg = rc.apply(msg, md)
	msg.ID = "" // each tick's run has its own
	return run.Schedule{AgentID: a.ID, AssistantID: stored, ContextID: threadID, Cron: b.Schedule, TimeZone: b.Timezone,
		Input: msg, Metadata: md, EndAt: b.EndTime}, nil
}

// protocolField renames the schedule's members as the Agent Protocol
// names them.
func protocolField(err error) error {
	names := map[string]string{"cron": "schedule", "end_at": "end_time", "agent_id": "assistant_id", "context_id": "thread_id"}
	var fe *errdefs.FieldError
	if errors.As(err, &fe) && names[fe.Field] != "" {
		return errdefs.WithField(names[fe.Field], fe.Err)
	}
	return err
}

func (s *Server) deleteCron(w http.ResponseWriter, r *http.Request) {
	if err := s.rt.DeleteSchedule(r.Context(), chi.URLParam(r, "cronID")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func patchCron(w http.ResponseWriter, r *http.Request) {
	writeDetail(w, http.StatusMethodNotAllowed, "crons are not updated in place: delete the cron and create it anew")
}

// cronQuery is a cron search or count (CronSearch, CronCount).
type cronQuery struct {
	AssistantID string         `json:"assistant_id"`
	ThreadID    string         `json:"thread_id"`
	Enabled     *bool          `json:"enabled"`
	Metadata    map[string]any `json:"metadata"`
	Limit       int            `json:"limit"`
	Offset      int            `json:"offset"`
	SortBy      string         `json:"sort_by"`
	SortOrder   string         `json:"sort_order"`
	Select      []string       `json:"select"`
}

// query is q as the runtime's, or ok false when no cron can match (an
// unknown assistant).
func (s *Server) query(ctx context.Context, q cronQuery) (run.ScheduleQuery, bool, error) {
	switch {
	case q.Limit < 0 || q.Offset < 0:
		return run.ScheduleQuery{}, false, badInput("limit", "limit and offset must not be negative")
	case q.Enabled != nil:
		return run.ScheduleQuery{}, false, badInput("enabled", "filtering by enabled is not served; next_run_date is null on a cron that ended")
	case q.SortBy != "" && q.SortBy != "created_at":
		return run.ScheduleQuery{}, false, badInput("sort_by", "%q: crons are listed by created_at", q.SortBy)
	case q.SortOrder != "" && q.SortOrder != "asc":
		return run.ScheduleQuery{}, false, badInput("sort_order", "%q: crons are listed oldest first (asc)", q.SortOrder)
	}
	sq := run.ScheduleQuery{ContextID: q.ThreadID, Metadata: q.Metadata, Offset: q.Offset, Limit: q.Limit}
	if q.AssistantID != "" {
		a, stored, err := s.agentOf(ctx, q.AssistantID)
		if err != nil {
			return sq, false, nil
		}
		sq.AgentID, sq.AssistantID = a.ID, stored
	}
	return sq, true, nil
}

func (s *Server) searchCrons(w http.ResponseWriter, r *http.Request) {
	page, total, err := s.findCrons(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]cronJSON, 0, len(page))
	for _, sc := range page {
		out = append(out, cronOf(sc))
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) countCrons(w http.ResponseWriter, r *http.Request) {
	_, total, err := s.findCrons(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, total)
}

// findCrons answers the search in r's body.
func (s *Server) findCrons(w http.ResponseWriter, r *http.Request) ([]run.Schedule, int, error) {
	var q cronQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		return nil, 0, err
	}
	sq, ok, err := s.query(r.Context(), q)
	if err != nil || !ok {
		return nil, 0, err
	}
	return s.rt.SearchSchedules(r.Context(), sq)
}
