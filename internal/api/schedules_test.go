package api_test

import (
	"net/http"
	"testing"
	"time"

	"agentd/internal/api"
)

// TestSchedulesREST: create (201, Location, its first tick), get, list by
// agent and context with cursor paging, delete (then 404); bad members
// answer 400 naming them, and nothing is stored.
func TestSchedulesREST(t *testing.T) {
	e := newEnv(t, api.Options{})
	end := time.Now().Add(8 * 24 * time.Hour).UTC().Truncate(time.Second)
	res := e.do(http.MethodPost, "/v1/schedules", map[string]any{
		"agent_id": "echo", "cron": "0 9 * * 1-5", "timezone": "Europe/Paris", "text": "standup",
		"metadata": map[string]any{"team": "red"}, "end_at": end,
	})
	first := decode[api.ScheduleView](t, e.do(http.MethodPost, "/v1/schedules", map[string]any{
		"agent_id": "echo", "cron": "*/5 * * * *", "text": "poll", "context_id": "conv-1",
	}), http.StatusCreated)
	sc := decode[api.ScheduleView](t, res, http.StatusCreated)
	if res.header.Get("Location") != "/v1/schedules/"+sc.ID || sc.TimeZone != "Europe/Paris" || sc.Input.Text() != "standup" ||
		sc.Metadata["team"] != "red" || sc.EndAt == nil || !sc.EndAt.Equal(end) {
		t.Fatalf("created %+v (Location %q)", sc, res.header.Get("Location"))
	}
	if sc.NextFireAt == nil || sc.NextFireAt.After(end) || sc.NextFireAt.Before(time.Now()) {
		t.Fatalf("next tick %v outside (now, %v)", sc.NextFireAt, end)
	}
	got := decode[api.ScheduleView](t, e.do(http.MethodGet, "/v1/schedules/"+sc.ID, nil), http.StatusOK)
	if got.ID != sc.ID || got.Cron != "0 9 * * 1-5" {
		t.Fatalf("get = %+v", got)
	}
	page := decode[api.ScheduleList](t, e.do(http.MethodGet, "/v1/schedules?limit=1", nil), http.StatusOK)
	if len(page.Schedules) != 1 || page.Total != 2 || page.NextCursor == "" {
		t.Fatalf("first page = %+v", page)
	}
	next := decode[api.ScheduleList](t, e.do(http.MethodGet, "/v1/schedules?limit=1&cursor="+page.NextCursor, nil), http.StatusOK)
	if len(next.Schedules) != 1 || next.Schedules[0].ID == page.Schedules[0].ID || next.NextCursor != "" {
		t.Fatalf("second page = %+v", next)
	}
	byContext := decode[api.ScheduleList](t, e.do(http.MethodGet, "/v1/schedules?context=conv-1", nil), http.StatusOK)
	if len(byContext.Schedules) != 1 || byContext.Schedules[0].ID != first.ID {
		t.Fatalf("by context = %+v", byContext)
	}
	if r := e.do(http.MethodDelete, "/v1/schedules/"+sc.ID, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %s", r)
	}
	problem(t, e.do(http.MethodGet, "/v1/schedules/"+sc.ID, nil), http.StatusNotFound, "")
	problem(t, e.do(http.MethodDelete, "/v1/schedules/"+sc.ID, nil), http.StatusNotFound, "")
}

func TestSchedulesRESTBadInput(t *testing.T) {
	e := newEnv(t, api.Options{})
	past := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		field  string
	}{
		{"bad cron", map[string]any{"agent_id": "echo", "cron": "61 * * * *", "text": "x"}, 400, "cron"},
		{"six words", map[string]any{"agent_id": "echo", "cron": "every monday at nine", "text": "x"}, 400, "cron"},
		{"no cron", map[string]any{"agent_id": "echo", "text": "x"}, 400, "cron"},
		{"bad zone", map[string]any{"agent_id": "echo", "cron": "@daily", "timezone": "Nowhere/City", "text": "x"}, 400, "timezone"},
		{"past end", map[string]any{"agent_id": "echo", "cron": "@daily", "text": "x", "end_at": past}, 400, "end_at"},
		{"no input", map[string]any{"agent_id": "echo", "cron": "@daily"}, 400, "message"},
		{"no agent", map[string]any{"cron": "@daily", "text": "x"}, 400, "agent_id"},
		{"unknown agent", map[string]any{"agent_id": "nope", "cron": "@daily", "text": "x"}, 404, "agent_id"},
		{"unknown member", map[string]any{"agent_id": "echo", "cron": "@daily", "text": "x", "schedule": "@daily"}, 400, "schedule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problem(t, e.do(http.MethodPost, "/v1/schedules", tc.body), tc.status, tc.field)
		})
	}
	if list := decode[api.ScheduleList](t, e.do(http.MethodGet, "/v1/schedules", nil), http.StatusOK); list.Total != 0 {
		t.Fatalf("stored after refusals: %+v", list)
	}
}
