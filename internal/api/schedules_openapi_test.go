package api

import (
	"encoding/json"
	"testing"
	"time"

	"agentd/internal/model"
	"agentd/internal/run"
)

// TestOpenAPIDescribesSchedules: openapi.yaml's ScheduleView and
// ScheduleList describe what the handlers write, for a schedule with and
// without its optional members.
func TestOpenAPIDescribesSchedules(t *testing.T) {
	schemas := newSchemaSet(t, loadSpec(t))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	full := run.Schedule{ID: "s1", AgentID: "echo", ContextID: "c1", Cron: "0 9 * * *", TimeZone: "Europe/Paris",
		Input: model.NewText(model.RoleUser, "hi"), Metadata: map[string]any{"k": "v"}, EndAt: &at, NextFireAt: &at,
		CreatedAt: at, UpdatedAt: at}
	ended := run.Schedule{ID: "s2", AgentID: "echo", Cron: "@daily", Input: model.NewText(model.RoleUser, "hi"), CreatedAt: at, UpdatedAt: at}
	list := ScheduleList{Schedules: []ScheduleView{scheduleView(full), scheduleView(ended)}, Total: 2}
	for name, v := range map[string]any{"ScheduleView": scheduleView(full), "ScheduleList": list} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas.validate(component(name), b); err != nil {
			t.Errorf("%s does not describe %s: %v", name, b, err)
		}
	}
}
