package runtime

import (
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store/memstore"
)

// TestScheduleOnAnAssistant: a schedule that names a stored assistant fires
// runs on its latest version (the override answers), records it as a
// send naming it would, and is found by it; one naming an unknown
// assistant, or another agent's, is refused naming assistant_id.
func TestScheduleOnAnAssistant(t *testing.T) {
	working := false
	other := testAgent("echo", streamer(1, nil))
	r := startRuntime(t, Options{Store: memstore.New(), Agents: []*Agent{configurable(&working), other}})
	ctx := ctxT(t)
	a, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "talker", Context: map[string]any{"say": "scheduled"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []run.Schedule{
		{AgentID: "talker", AssistantID: "nope", Cron: "* * * * * *", Input: model.NewText(model.RoleUser, "x")},
		{AgentID: "echo", AssistantID: a.ID, Cron: "* * * * * *", Input: model.NewText(model.RoleUser, "x")},
	} {
		if _, err := r.CreateSchedule(ctx, bad); err == nil || errdefs.FieldOf(err) != "assistant_id" {
			t.Fatalf("schedule on assistant %q of %q: %v, want an error naming assistant_id", bad.AssistantID, bad.AgentID, err)
		}
	}
	end := time.Now().Add(1500 * time.Millisecond)
	s, err := r.CreateSchedule(ctx, run.Schedule{AgentID: "talker", AssistantID: a.ID, Cron: "* * * * * *",
		Input: model.NewText(model.RoleUser, "tick"), EndAt: &end})
	if err != nil {
		t.Fatal(err)
	}
	if found, total, err := r.SearchSchedules(ctx, run.ScheduleQuery{AssistantID: a.ID}); err != nil || total != 1 || found[0].ID != s.ID {
		t.Fatalf("schedules of the assistant: %v (%d), %v", found, total, err)
	}
	var task run.Task
	for deadline := time.Now().Add(testTimeout); task.ID == ""; time.Sleep(20 * time.Millisecond) {
		page, err := r.ListTasks(ctx, run.TaskQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) > 0 {
			task = page.Tasks[0]
		} else if time.Now().After(deadline) {
			t.Fatal("no tick fired")
		}
	}
	done := wait(t, r, task.ID)
	ref, ok := AssistantOf(done)
	if !ok || ref.ID != a.ID {
		t.Fatalf("the tick's run records assistant %+v (%v), want %s", ref, ok, a.ID)
	}
	page, err := r.ListMessages(ctx, run.MessageQuery{ContextID: done.ContextID, TaskID: done.ID})
	if err != nil || len(page.Messages) == 0 {
		t.Fatalf("messages: %v", err)
	}
	if got := page.Messages[len(page.Messages)-1].Text(); got != "scheduled" {
		t.Fatalf("the tick's run said %q, want the assistant's override", got)
	}
}
