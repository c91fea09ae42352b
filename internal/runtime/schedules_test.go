package runtime

import (
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store/memstore"
)

func scheduleRuntime(t *testing.T) *Runtime {
	t.Helper()
	return startRuntime(t, Options{Store: memstore.New(), Agents: []*Agent{testAgent("echo", streamer(1, nil))}})
}

// TestCreateScheduleRefusesBadInput: each bad member is a Validation (or
// NotFound) error naming it, and nothing is stored.
func TestCreateScheduleRefusesBadInput(t *testing.T) {
	r := scheduleRuntime(t)
	ctx := ctxT(t)
	past := time.Now().Add(-time.Hour)
	soon := time.Now().Add(time.Minute)
	good := run.Schedule{AgentID: "echo", Cron: "0 9 * * *", Input: model.NewText(model.RoleUser, "hi")}
	for _, tc := range []struct {
		name, field string
		edit        func(s *run.Schedule)
	}{
		{"bad cron", "cron", func(s *run.Schedule) { s.Cron = "61 * * * *" }},
		{"word cron", "cron", func(s *run.Schedule) { s.Cron = "every day" }},
		{"empty cron", "cron", func(s *run.Schedule) { s.Cron = "" }},
		{"zone in the expression", "cron", func(s *run.Schedule) { s.Cron = "CRON_TZ=Europe/Paris 0 9 * * *" }},
		{"bad zone", "timezone", func(s *run.Schedule) { s.TimeZone = "Mars/Olympus" }},
		{"unknown agent", "agent_id", func(s *run.Schedule) { s.AgentID = "nope" }},
		{"empty input", "input", func(s *run.Schedule) { s.Input = model.Message{} }},
		{"past end", "end_at", func(s *run.Schedule) { s.EndAt = &past }},
		{"no tick before the end", "end_at", func(s *run.Schedule) { s.EndAt = &soon; s.Cron = "0 0 1 1 *" }},
		{"never fires", "cron", func(s *run.Schedule) { s.Cron = "0 0 30 2 *" }},
		{"bad context id", "context_id", func(s *run.Schedule) { s.ContextID = "a b" }},
	} {
		s := good
		tc.edit(&s)
		_, err := r.CreateSchedule(ctx, s)
		if err == nil || errdefs.FieldOf(err) != tc.field || !(errdefs.IsValidation(err) || errdefs.IsNotFound(err)) {
			t.Errorf("%s: %v (field %q), want a validation error on %s", tc.name, err, errdefs.FieldOf(err), tc.field)
		}
	}
	if page, total, err := r.SearchSchedules(ctx, run.ScheduleQuery{}); err != nil || total != 0 || len(page) != 0 {
		t.Fatalf("stored after refusals: %v (%d), %v", page, total, err)
	}
}

// TestScheduleFiresUntilItsEnd: a schedule every second fires one run per
// tick, each an ordinary run with schedule_id and schedule_tick, and none
// at or after its end date; then it has no next tick.
func TestScheduleFiresUntilItsEnd(t *testing.T) {
	r := scheduleRuntime(t)
	ctx := ctxT(t)
	end := time.Now().Add(2500 * time.Millisecond)
	s, err := r.CreateSchedule(ctx, run.Schedule{AgentID: "echo", Cron: "* * * * * *", TimeZone: "Europe/Paris",
		Input: model.NewText(model.RoleUser, "tick"), Metadata: map[string]any{"team": "red"}, EndAt: &end})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for tick := *s.NextFireAt; tick.Before(end); tick = tick.Add(time.Second) {
		want = append(want, tick.UTC().Format(time.RFC3339Nano))
	}
	for deadline := time.Now().Add(testTimeout); ; {
		got, err := r.GetSchedule(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.NextFireAt == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule still due at %v after its end %v", got.NextFireAt, end)
		}
		time.Sleep(20 * time.Millisecond) // polling the store: the end has no event to wait on
	}
	page, err := r.ListTasks(ctx, run.TaskQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ticks []string
	for _, task := range page.Tasks {
		if task.Metadata[MetaScheduleID] != s.ID || task.Metadata["team"] != "red" {
			t.Errorf("run %s: metadata %v", task.ID, task.Metadata)
		}
		ticks = append(ticks, task.Metadata[MetaScheduleTick].(string))
	}
	if !sameSet(ticks, want) {
		t.Fatalf("fired ticks %v, want %v", ticks, want)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] != 1 {
			return false
		}
	}
	return true
}

// TestTickRunIsIdempotent: firing the same tick twice (a replica took over
// a tick whose claimant died after starting its run) starts one run.
func TestTickRunIsIdempotent(t *testing.T) {
	r := scheduleRuntime(t)
	ctx := ctxT(t)
	tick := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, s := range []run.Schedule{
		{ID: "stateless", AgentID: "echo", Input: model.NewText(model.RoleUser, "tick")},
		{ID: "threaded", AgentID: "echo", ContextID: "conv-1", Input: model.NewText(model.RoleUser, "tick")},
	} {
		first, err := r.Send(ctx, tickRequest(s, tick))
		if err != nil {
			t.Fatal(err)
		}
		wait(t, r, first.Task.ID)
		again, err := r.Send(ctx, tickRequest(s, tick))
		if err != nil || !again.Duplicate || again.Task.ID != first.Task.ID {
			t.Fatalf("%s: second firing = %+v, %v; want the first run %s as a duplicate", s.ID, again.Task.ID, err, first.Task.ID)
		}
		other, err := r.Send(ctx, tickRequest(s, tick.Add(time.Hour)))
		if err != nil || other.Duplicate {
			t.Fatalf("%s: the next tick = %+v, %v; want a new run", s.ID, other, err)
		}
		wait(t, r, other.Task.ID)
	}
}

// TestMissedTicksPolicy: a schedule a takeover left a few seconds behind
// fires every tick it missed; one left further behind than the grace
// (every replica was down) fires once and resumes after now — once for a
// tick not yet fired, not for one whose run its dead claimant had started.
func TestMissedTicksPolicy(t *testing.T) {
	r := scheduleRuntime(t)
	spec, loc, err := parseSchedule("* * * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := run.Schedule{}
	if got := r.following(spec, loc, s, tick, tick.Add(3*time.Second), false); got == nil || !got.Equal(tick.Add(time.Second)) {
		t.Fatalf("3 s behind: next %v, want the next tick %v", got, tick.Add(time.Second))
	}
	now := tick.Add(time.Hour + 300*time.Millisecond)
	if got := r.following(spec, loc, s, tick, now, false); got == nil || !got.Equal(tick.Add(time.Hour+time.Second)) {
		t.Fatalf("an hour behind: next %v, want the first tick after now %v", got, tick.Add(time.Hour+time.Second))
	}
	// The tick's run was already there (its claimant died before
	// advancing): the oldest unfired tick is the next, fired on recovery.
	if got := r.following(spec, loc, s, tick, now, true); got == nil || !got.Equal(tick.Add(time.Second)) {
		t.Fatalf("an hour behind after a duplicate: next %v, want the next tick %v", got, tick.Add(time.Second))
	}
	end := tick.Add(time.Second)
	s.EndAt = &end
	if got := r.following(spec, loc, s, tick, tick, false); got != nil {
		t.Fatalf("at the end: next %v, want none", got)
	}
}

// TestScheduleTimeZone: an expression is read in the schedule's zone.
func TestScheduleTimeZone(t *testing.T) {
	r := scheduleRuntime(t)
	s, err := r.CreateSchedule(ctxT(t), run.Schedule{AgentID: "echo", Cron: "30 9 * * *", TimeZone: "America/New_York",
		Input: model.NewText(model.RoleUser, "morning")})
	if err != nil {
		t.Fatal(err)
	}
	ny, _ := time.LoadLocation("America/New_York")
	if at := s.NextFireAt.In(ny); at.Hour() != 9 || at.Minute() != 30 || !s.NextFireAt.After(time.Now()) {
		t.Fatalf("next tick %v (%v in New York), want 09:30 there", s.NextFireAt, at)
	}
}
