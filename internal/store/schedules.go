package store

import (
	"context"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// Schedules stores cron schedules per tenant and lets replicas share
// their firing: a due tick is claimed (one winner, by a conditional
// update, as a lease is), fired, then the schedule is advanced by its
// claimant. A claimant that dies leaves a claim that expires, and another
// replica claims the same tick again. It is optional, found by type
// assertion; memstore and pgstore implement it and
// storetest.RunSchedulesSuite is their contract.
type Schedules interface {
	// CreateSchedule stores s in the context's tenant; an existing id is
	// a Conflict.
	CreateSchedule(ctx context.Context, s run.Schedule) (run.Schedule, error)
	// GetSchedule returns the schedule, NotFound when it does not exist
	// in the context's tenant.
	GetSchedule(ctx context.Context, id string) (run.Schedule, error)
	// DeleteSchedule deletes it (NotFound when absent); runs it started
	// are left alone.
	DeleteSchedule(ctx context.Context, id string) error
	// SearchSchedules returns one page of the matching schedules and how
	// many match in all.
	SearchSchedules(ctx context.Context, q run.ScheduleQuery) (page []run.Schedule, total int, err error)
	// ClaimDueSchedules claims for owner, until now+ttl, up to limit
	// schedules of any tenant whose NextFireAt is at or before now and
	// whose claim is free or expired, and returns them with their Tenant
	// and ClaimedBy. Of concurrent claimants of a tick exactly one wins.
	ClaimDueSchedules(ctx context.Context, owner string, now time.Time, ttl time.Duration, limit int) ([]run.Schedule, error)
	// AdvanceSchedule moves the claimed schedule s (its Tenant, ID,
	// NextFireAt and ClaimedBy as ClaimDueSchedules returned them) to
	// next (nil: the schedule has ended) and frees its claim, provided it
	// still stands at s.NextFireAt claimed by s.ClaimedBy; otherwise
	// Conflict (another replica took the tick over), NotFound when the
	// schedule is gone.
	AdvanceSchedule(ctx context.Context, s run.Schedule, next *time.Time) error
	// NextScheduleDue is the earliest time ClaimDueSchedules could claim
	// a schedule of any tenant: its NextFireAt, or the end of the claim
	// another replica holds on it; zero when no schedule has a next tick.
	// A scheduler sleeps until then.
	NextScheduleDue(ctx context.Context) (time.Time, error)
}

// ValidateSchedule checks what CreateSchedule stores: the runtime checks
// the expression and the agent; a store checks that the record is whole.
func ValidateSchedule(s run.Schedule) error {
	switch {
	case s.ID == "":
		return errdefs.Validationf("schedule: empty id")
	case s.AgentID == "":
		return errdefs.Validationf("schedule %s: empty agent", s.ID)
	case s.Cron == "":
		return errdefs.Validationf("schedule %s: empty cron expression", s.ID)
	}
	return nil
}
