package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// RunSchedulesSuite is the contract of store.Schedules: create, get,
// delete, search, tenancy, and the firing protocol — a due tick is claimed
// by exactly one of many concurrent claimants, an expired claim is taken
// over, and only the tick's current claimant advances it.
func RunSchedulesSuite(t *testing.T, newStore func(t *testing.T) store.Schedules) {
	t.Run("CreateGetDelete", func(t *testing.T) { scheduleCRUD(t, newStore(t)) })
	t.Run("Search", func(t *testing.T) { scheduleSearch(t, newStore(t)) })
	t.Run("ClaimOnce", func(t *testing.T) { scheduleClaimOnce(t, newStore(t)) })
	t.Run("ClaimExpiresAndAdvance", func(t *testing.T) { scheduleClaimExpiry(t, newStore(t)) })
}

// scheduleT0 is the suite's first tick, at the stores' precision.
var scheduleT0 = store.StoredTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func newSchedule(id string, next *time.Time) run.Schedule {
	return run.Schedule{ID: id, AgentID: "echo", Cron: "* * * * *", TimeZone: "Europe/Paris",
		Input:    model.Message{Role: model.RoleUser, Parts: []model.Part{model.TextPart("tick")}},
		Metadata: map[string]any{"team": "red"}, NextFireAt: next}
}

func mustCreateSchedule(t *testing.T, s store.Schedules, ctx context.Context, sc run.Schedule) run.Schedule {
	t.Helper()
	out, err := s.CreateSchedule(ctx, sc)
	if err != nil {
		t.Fatalf("create schedule %s: %v", sc.ID, err)
	}
	return out
}

func scheduleCRUD(t *testing.T, s store.Schedules) {
	ctx := run.WithTenant(context.Background(), "acme")
	end := scheduleT0.Add(time.Hour)
	sc := newSchedule("s1", &scheduleT0)
	sc.ContextID, sc.EndAt = "ctx-1", &end
	created := mustCreateSchedule(t, s, ctx, sc)
	if created.CreatedAt.IsZero() || created.Tenant != "acme" {
		t.Fatalf("created = %+v", created)
	}
	if _, err := s.CreateSchedule(ctx, sc); !errdefs.IsConflict(err) {
		t.Fatalf("second create: %v, want Conflict", err)
	}
	got, err := s.GetSchedule(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.AgentID != "echo" || got.ContextID != "ctx-1" || got.Cron != "* * * * *" || got.TimeZone != "Europe/Paris" ||
		got.Input.Text() != "tick" || got.Metadata["team"] != "red" || got.EndAt == nil || !got.EndAt.Equal(end) ||
		got.NextFireAt == nil || !got.NextFireAt.Equal(scheduleT0) || !got.CreatedAt.Equal(created.CreatedAt) {
		t.Fatalf("get = %+v", got)
	}
	other := run.WithTenant(context.Background(), "other")
	if _, err := s.GetSchedule(other, "s1"); !errdefs.IsNotFound(err) {
		t.Fatalf("get from another tenant: %v, want NotFound", err)
	}
	if err := s.DeleteSchedule(other, "s1"); !errdefs.IsNotFound(err) {
		t.Fatalf("delete from another tenant: %v, want NotFound", err)
	}
	if err := s.DeleteSchedule(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSchedule(ctx, "s1"); !errdefs.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
	if _, err := s.CreateSchedule(ctx, run.Schedule{ID: "bad", AgentID: "echo"}); !errdefs.IsValidation(err) {
		t.Fatalf("create without a cron expression: %v, want Validation", err)
	}
}

func scheduleSearch(t *testing.T, s store.Schedules) {
	ctx := context.Background()
	a := newSchedule("a", nil)
	b := newSchedule("b", nil)
	b.AgentID, b.Metadata = "other", map[string]any{"team": "blue"}
	c := newSchedule("c", nil)
	c.ContextID, c.AssistantID = "ctx-1", "asst-1"
	for _, sc := range []run.Schedule{a, b, c} {
		mustCreateSchedule(t, s, ctx, sc)
	}
	mustCreateSchedule(t, s, run.WithTenant(ctx, "other"), newSchedule("x", nil))
	for _, tc := range []struct {
		name  string
		q     run.ScheduleQuery
		want  []string
		total int
	}{
		{"all", run.ScheduleQuery{}, []string{"a", "b", "c"}, 3},
		{"agent", run.ScheduleQuery{AgentID: "echo"}, []string{"a", "c"}, 2},
		{"context", run.ScheduleQuery{ContextID: "ctx-1"}, []string{"c"}, 1},
		{"assistant", run.ScheduleQuery{AssistantID: "asst-1"}, []string{"c"}, 1},
		{"metadata", run.ScheduleQuery{Metadata: map[string]any{"team": "blue"}}, []string{"b"}, 1},
		{"page", run.ScheduleQuery{Offset: 1, Limit: 1}, []string{"b"}, 3},
		{"past the end", run.ScheduleQuery{Offset: 5}, nil, 3},
	} {
		page, total, err := s.SearchSchedules(ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var ids []string
		for _, sc := range page {
			ids = append(ids, sc.ID)
			if want := map[string]string{"c": "asst-1"}[sc.ID]; sc.AssistantID != want {
				t.Errorf("%s: schedule %s runs on assistant %q, want %q", tc.name, sc.ID, sc.AssistantID, want)
			}
		}
		if !slices.Equal(ids, tc.want) || total != tc.total {
			t.Errorf("%s: %v (total %d), want %v (total %d)", tc.name, ids, total, tc.want, tc.total)
		}
	}
}

// scheduleClaimOnce: of many replicas claiming the due ticks at once,
// each schedule goes to exactly one; ticks not due are left alone.
func scheduleClaimOnce(t *testing.T, s store.Schedules) {
	ctx := context.Background()
	later := scheduleT0.Add(time.Minute)
	for _, id := range []string{"d1", "d2", "d3"} {
		mustCreateSchedule(t, s, run.WithTenant(ctx, "t-"+id), newSchedule(id, &scheduleT0))
	}
	mustCreateSchedule(t, s, ctx, newSchedule("later", &later))
	mustCreateSchedule(t, s, ctx, newSchedule("ended", nil))
	var (
		mu     sync.Mutex
		claims = map[string][]string{}
		wg     sync.WaitGroup
	)
	for i := range 8 {
		owner := string(rune('A' + i))
		wg.Go(func() {
			got, err := s.ClaimDueSchedules(ctx, owner, scheduleT0.Add(time.Second), 10*time.Second, 10)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, sc := range got {
				if sc.ClaimedBy != owner || sc.Tenant != "t-"+sc.ID || sc.NextFireAt == nil || !sc.NextFireAt.Equal(scheduleT0) {
					t.Errorf("claimed %+v", sc)
				}
				claims[sc.ID] = append(claims[sc.ID], owner)
			}
		})
	}
	wg.Wait()
	if len(claims) != 3 {
		t.Fatalf("claims = %v, want d1, d2, d3 once each", claims)
	}
	for id, owners := range claims {
		if len(owners) != 1 {
			t.Errorf("schedule %s claimed by %v, want one replica", id, owners)
		}
	}
	due, err := s.NextScheduleDue(ctx)
	if want := scheduleT0.Add(11 * time.Second); err != nil || !due.Equal(want) {
		t.Fatalf("next due with every due tick claimed = %v, %v; want the claims' end %v", due, err, want)
	}
}

// scheduleClaimExpiry: a claim that expires goes to the next claimant;
// the first claimant can then no longer advance the tick, the second can,
// and the schedule is due again at its next tick (or never, when ended).
func scheduleClaimExpiry(t *testing.T, s store.Schedules) {
	ctx := run.WithTenant(context.Background(), "acme")
	mustCreateSchedule(t, s, ctx, newSchedule("s1", &scheduleT0))
	now := scheduleT0.Add(time.Second)
	first := claimOne(t, s, "A", now, time.Second)
	if got, _ := s.ClaimDueSchedules(ctx, "B", now, time.Second, 10); len(got) != 0 {
		t.Fatalf("a held claim was claimed again: %+v", got)
	}
	second := claimOne(t, s, "B", now.Add(2*time.Second), time.Second)
	next := scheduleT0.Add(time.Minute)
	if err := s.AdvanceSchedule(ctx, first, &next); !errdefs.IsConflict(err) {
		t.Fatalf("advance by the claimant whose claim expired: %v, want Conflict", err)
	}
	if err := s.AdvanceSchedule(ctx, second, &next); err != nil {
		t.Fatal(err)
	}
	if err := s.AdvanceSchedule(ctx, second, &next); !errdefs.IsConflict(err) {
		t.Fatalf("second advance of the same tick: %v, want Conflict", err)
	}
	got, err := s.GetSchedule(ctx, "s1")
	if err != nil || got.NextFireAt == nil || !got.NextFireAt.Equal(next) || got.ClaimedBy != "" {
		t.Fatalf("after advance = %+v, %v", got, err)
	}
	if due, err := s.NextScheduleDue(ctx); err != nil || !due.Equal(next) {
		t.Fatalf("next due = %v, %v; want %v", due, err, next)
	}
	third := claimOne(t, s, "A", next, time.Second)
	if err := s.AdvanceSchedule(ctx, third, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimDueSchedules(ctx, "A", next.Add(time.Hour), time.Second, 10); len(got) != 0 {
		t.Fatalf("an ended schedule was claimed: %+v", got)
	}
	if due, err := s.NextScheduleDue(ctx); err != nil || !due.IsZero() {
		t.Fatalf("next due with no schedule left = %v, %v; want zero", due, err)
	}
	third.ID = "gone"
	if err := s.AdvanceSchedule(ctx, third, nil); !errdefs.IsNotFound(err) {
		t.Fatalf("advance of a missing schedule: %v, want NotFound", err)
	}
}

func claimOne(t *testing.T, s store.Schedules, owner string, now time.Time, ttl time.Duration) run.Schedule {
	t.Helper()
	got, err := s.ClaimDueSchedules(context.Background(), owner, now, ttl, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim by %s at %v = %+v, %v; want one schedule", owner, now, got, err)
	}
	return got[0]
}
