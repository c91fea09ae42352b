package api

import (
	"net/http"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// Schedules (runtime.CreateSchedule): cron schedules that start runs of
// an agent without a caller. Each tick's run is an ordinary run whose
// metadata carries schedule_id and schedule_tick.

// scheduleBody is POST /v1/schedules: the input is "message" or the
// shorthand "text", as in a send.
type scheduleBody struct {
	ID      string `json:"id,omitempty"`
	AgentID string `json:"agent_id"`
	// AssistantID names a stored assistant of the agent each tick runs on.
	AssistantID string         `json:"assistant_id,omitempty"`
	ContextID   string         `json:"context_id,omitempty"`
	Cron        string         `json:"cron"`
	TimeZone    string         `json:"timezone,omitempty"`
	Message     *model.Message `json:"message,omitempty"`
	Text        string         `json:"text,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	EndAt       *time.Time     `json:"end_at,omitempty"`
}

// ScheduleView is a schedule as the API shows it; next_fire_at is null
// once the schedule has ended.
type ScheduleView struct {
	ID          string         `json:"id"`
	AgentID     string         `json:"agent_id"`
	AssistantID string         `json:"assistant_id,omitempty"`
	ContextID   string         `json:"context_id,omitempty"`
	Cron        string         `json:"cron"`
	TimeZone    string         `json:"timezone"`
	Input       model.Message  `json:"input"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	EndAt       *time.Time     `json:"end_at"`
	NextFireAt  *time.Time     `json:"next_fire_at"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// ScheduleList is a page of schedules, oldest first.
type ScheduleList struct {
	Schedules  []ScheduleView `json:"schedules"`
	Total      int            `json:"total"`
	NextCursor string         `json:"next_cursor"`
}

func scheduleView(s run.Schedule) ScheduleView {
	zone := s.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	return ScheduleView{ID: s.ID, AgentID: s.AgentID, AssistantID: s.AssistantID, ContextID: s.ContextID, Cron: s.Cron, TimeZone: zone,
		Input: s.Input, Metadata: s.Metadata, EndAt: s.EndAt, NextFireAt: s.NextFireAt, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request) {
	var b scheduleBody
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		writeError(w, r, err)
		return
	}
	msg, err := sendBody{Message: b.Message, Text: b.Text}.message()
	if err != nil {
		writeError(w, r, err)
		return
	}
	if b.AgentID == "" {
		writeError(w, r, fieldErr("agent_id", errdefs.Validationf("is required")))
		return
	}
	sc, err := s.rt.CreateSchedule(r.Context(), run.Schedule{ID: b.ID, AgentID: b.AgentID, AssistantID: b.AssistantID, ContextID: b.ContextID,
		Cron: b.Cron, TimeZone: b.TimeZone, Input: msg, Metadata: b.Metadata, EndAt: b.EndAt})
	if err != nil {
		if b.Message == nil && errdefs.FieldOf(err) == "input" {
			err = fieldErr("text", err)
		}
		writeError(w, r, err)
		return
	}
	w.Header()["Location"] = []string{"/v1/schedules/" + sc.ID}
	writeJSON(w, http.StatusCreated, scheduleView(sc))
}

// listSchedules answers the caller's schedules, oldest first; the cursor
// is the offset of the next page.
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := limitParam(r, 100)
	if err != nil {
		writeError(w, r, err)
		return
	}
	offset := 0
	if c := q.Get("cursor"); c != "" {
		if offset, err = strconv.Atoi(c); err != nil || offset < 0 {
			writeError(w, r, fieldErr("cursor", errdefs.Validationf("%q is not a cursor this server issued; pass a previous page's next_cursor", c)))
			return
		}
	}
	page, total, err := s.rt.SearchSchedules(r.Context(), run.ScheduleQuery{AgentID: q.Get("agent"), ContextID: q.Get("context"), Offset: offset, Limit: limit})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := ScheduleList{Schedules: make([]ScheduleView, len(page)), Total: total}
	for i, sc := range page {
		out.Schedules[i] = scheduleView(sc)
	}
	if next := offset + len(page); next < total && len(page) > 0 {
		out.NextCursor = strconv.Itoa(next)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "scheduleID")
	if err == nil {
		var sc run.Schedule
		if sc, err = s.rt.GetSchedule(r.Context(), id); err == nil {
			writeJSON(w, http.StatusOK, scheduleView(sc))
			return
		}
	}
	writeError(w, r, err)
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "scheduleID")
	if err == nil {
		err = s.rt.DeleteSchedule(r.Context(), id)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
