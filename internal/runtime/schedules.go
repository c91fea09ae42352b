package runtime

import (
	"context"
	"strings"
	"time"
	_ "time/tzdata" // schedules name IANA time zones; the static image has no zoneinfo

	"github.com/robfig/cron/v3"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// Schedules start runs without a caller: a schedule (run.Schedule) names
// an agent, a cron expression read in a time zone, an input message,
// metadata, an optional conversation and an optional end date; at each
// tick one replica starts an ordinary run of it (schedules_fire.go). This
// file is their API: create, read, search, delete, each checked as
// strictly as a run's request.

// MetaScheduleID and MetaScheduleTick are the metadata keys of a run a
// schedule started: the schedule's id and the tick (RFC 3339, UTC).
const (
	MetaScheduleID   = "schedule_id"
	MetaScheduleTick = "schedule_tick"
)

// cronParser reads standard five-field expressions, an optional leading
// seconds field, and descriptors (@hourly, @every 90s).
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// scheduleStore returns the store's schedules, looking through wrappers
// that expose Unwrap (the metrics' store).
func (r *Runtime) scheduleStore() (store.Schedules, error) {
	st := r.st
	for {
		if ss, ok := st.(store.Schedules); ok {
			return ss, nil
		}
		u, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			return nil, errdefs.Public(errdefs.NotAvailablef("this server's store keeps no schedules"))
		}
		st = u.Unwrap()
	}
}

// CreateSchedule checks s and stores it with its first tick: the agent
// must be hosted here, the expression and time zone valid, the input a
// valid user message, the end date (if any) later than the first tick.
// An empty ID gets a new one. Each error names the request member.
func (r *Runtime) CreateSchedule(ctx context.Context, s run.Schedule) (run.Schedule, error) {
	ss, err := r.scheduleStore()
	if err != nil {
		return run.Schedule{}, err
	}
	if err := r.checkSchedule(&s); err != nil {
		return run.Schedule{}, err
	}
	if err := r.checkScheduleAssistant(ctx, &s); err != nil {
		return run.Schedule{}, err
	}
	spec, loc, _ := parseSchedule(s.Cron, s.TimeZone) // checked
	first := nextTick(spec, loc, time.Now(), s.EndAt)
	switch {
	case first == nil && s.EndAt == nil:
		return run.Schedule{}, errdefs.WithField("cron", errdefs.Validationf("%q never fires", s.Cron))
	case first == nil:
		return run.Schedule{}, errdefs.WithField("end_at", errdefs.Validationf("%s is before the schedule's first tick", s.EndAt.Format(time.RFC3339)))
	}
	s.NextFireAt, s.ClaimedBy = first, ""
	out, err := ss.CreateSchedule(ctx, s)
	if err == nil {
		r.wakeScheduler()
	}
	return out, err
}

// checkScheduleAssistant checks the stored assistant s names, if any: it
// exists in the caller's tenant and configures s's agent. Each tick reads
// its latest version when it fires, as a send naming it would.
func (r *Runtime) checkScheduleAssistant(ctx context.Context, s *run.Schedule) error {
	if s.AssistantID == "" {
		return nil
	}
	a, err := r.GetAssistant(ctx, s.AssistantID, 0)
	if err != nil {
		return errdefs.WithField("assistant_id", err)
	}
	if a.AgentID != s.AgentID {
		return errdefs.WithField("assistant_id", errdefs.Validationf("assistant %q configures agent %q, not %q", a.ID, a.AgentID, s.AgentID))
	}
	return nil
}

// checkSchedule validates a schedule to create and fills in its id and
// its input's defaults.
func (r *Runtime) checkSchedule(s *run.Schedule) error {
	a, err := r.Agent(s.AgentID)
	if err != nil {
		return errdefs.WithField("agent_id", err)
	}
	if s.ID == "" {
		s.ID = newID()
	} else if err := checkClientID(s.ID); err != nil {
		return errdefs.WithField("id", err)
	}
	if s.ContextID != "" {
		if err := checkClientID(s.ContextID); err != nil {
			return errdefs.WithField("context_id", err)
		}
	}
	if _, _, err := parseSchedule(s.Cron, s.TimeZone); err != nil {
		return err
	}
	msg, err := normaliseUserMessage(s.Input)
	if err != nil {
		return errdefs.WithField("input", err)
	}
	if err := checkInputModes(a, msg.Message); err != nil {
		return errdefs.WithField("input", err)
	}
	s.Input = msg.Message
	s.Input.ID, s.Input.CreatedAt = "", time.Time{} // each tick's message has its own
	if s.EndAt != nil && !s.EndAt.After(time.Now()) {
		return errdefs.WithField("end_at", errdefs.Validationf("%s is in the past", s.EndAt.Format(time.RFC3339)))
	}
	return nil
}

// parseSchedule reads a cron expression and its time zone ("" = UTC).
// The zone is a field of its own, so an expression's CRON_TZ= or TZ=
// prefix is refused rather than read a second way.
func parseSchedule(expr, zone string) (cron.Schedule, *time.Location, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil, errdefs.WithField("cron", errdefs.Validationf("is required"))
	}
	if strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=") {
		return nil, nil, errdefs.WithField("cron", errdefs.Validationf("%q: name the time zone in timezone, not in the expression", expr))
	}
	spec, err := cronParser.Parse(expr)
	if err != nil {
		return nil, nil, errdefs.WithField("cron", errdefs.Validationf("%q: %v (want five fields, six with seconds first, or a descriptor such as @hourly or @every 10s)", expr, err))
	}
	loc := time.UTC
	if zone != "" {
		if loc, err = time.LoadLocation(zone); err != nil || zone == "Local" {
			return nil, nil, errdefs.WithField("timezone", errdefs.Validationf("%q is not an IANA time zone (such as Europe/Paris)", zone))
		}
	}
	return spec, loc, nil
}

// nextTick is the schedule's first tick after t, read in loc; nil when
// there is none before end.
func nextTick(spec cron.Schedule, loc *time.Location, t time.Time, end *time.Time) *time.Time {
	next := spec.Next(t.In(loc))
	if next.IsZero() || (end != nil && !next.Before(*end)) {
		return nil
	}
	next = store.StoredTime(next)
	return &next
}

// GetSchedule returns the caller's schedule (NotFound for another
// tenant's).
func (r *Runtime) GetSchedule(ctx context.Context, id string) (run.Schedule, error) {
	ss, err := r.scheduleStore()
	if err != nil {
		return run.Schedule{}, err
	}
	return ss.GetSchedule(ctx, id)
}

// SearchSchedules returns one page of the caller's schedules, oldest
// first, and how many match.
func (r *Runtime) SearchSchedules(ctx context.Context, q run.ScheduleQuery) ([]run.Schedule, int, error) {
	ss, err := r.scheduleStore()
	if err != nil {
		return nil, 0, err
	}
	return ss.SearchSchedules(ctx, q)
}

// DeleteSchedule deletes the caller's schedule: no tick fires after it
// (a tick being fired as it is deleted still starts its run). The runs it
// started are left alone.
func (r *Runtime) DeleteSchedule(ctx context.Context, id string) error {
	ss, err := r.scheduleStore()
	if err != nil {
		return err
	}
	return ss.DeleteSchedule(ctx, id)
}
