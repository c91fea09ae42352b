package runtime

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// Firing. Every replica runs one scheduler loop (schedule). It sleeps until
// the store's next due tick (NextScheduleDue; at most a sweep period, so
// that schedules created on other replicas are seen), then claims the due
// ticks (ClaimDueSchedules: one winner per tick, the claim lasting a lease
// TTL), starts each tick's run and advances the schedule to its next
// tick. The tick's run is an ordinary run (Send, without a caller) whose
// metadata carries schedule_id and schedule_tick.
//
// Exactly once: the claim makes one replica the tick's firer; the run's
// ids make the firing idempotent. Its message id is derived from the
// schedule and the tick, and so is its conversation when the schedule
// names none, so a replica that claims a tick whose claimant died after
// starting its run but before advancing the schedule finds the run
// already there (Send answers the duplicate) and only advances. A claimant
// that cannot reach the store leaves the schedule where it is: its claim
// lapses and the tick is fired again, here or elsewhere.
//
// Missed ticks: a tick is fired late rather than never while the schedule
// is less than scheduleGrace behind — a claim taken over after its
// replica died (a lease TTL) never costs a tick; each missed tick then
// fires once, oldest first. A schedule further behind than that — every
// replica was down — fires once on recovery, for the oldest tick it
// missed, and then moves to the first tick after now: the ticks between
// are skipped, not replayed in a burst. (A tick whose run is found already
// there was fired by a replica that died before advancing; it does not
// count as the recovery's firing.)

// scheduleBatch bounds the ticks one claim takes; fireParallel how many
// of them are fired at once.
const (
	scheduleBatch = 32
	fireParallel  = 8
)

// scheduleNamespace derives a tick's conversation id (UUIDv5).
var scheduleNamespace = uuid.MustParse("5d1c4a2e-8f1b-4c7e-9a43-0b7f6a1e2c9d")

// scheduleGrace is how far behind a schedule may fall and still fire
// every tick it missed.
func (r *Runtime) scheduleGrace() time.Duration { return r.leaseTTL + 5*time.Second }

// wakeScheduler makes this replica's scheduler look at the store now (a
// schedule was created here).
func (r *Runtime) wakeScheduler() {
	select {
	case r.scheduleWake <- struct{}{}:
	default:
	}
}

// schedule is the scheduler loop; it returns when ctx ends, at once when
// the store keeps no schedules.
func (r *Runtime) schedule(ctx context.Context) {
	ss, err := r.scheduleStore()
	if err != nil {
		return
	}
	for {
		wait := r.fireDue(ctx, ss)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.scheduleWake:
		case <-t.C:
		}
		t.Stop()
	}
}

// fireDue fires the ticks due now and answers how long to sleep before
// the next.
func (r *Runtime) fireDue(ctx context.Context, ss store.Schedules) time.Duration {
	if r.Draining() || r.recentStoreTrouble() {
		return r.sweepEvery
	}
	for {
		due, err := ss.ClaimDueSchedules(ctx, r.replica, time.Now(), r.leaseTTL, scheduleBatch)
		if err != nil {
			r.noteStoreError(err)
			r.log.Warn("claiming due schedules failed; will retry", "err", err)
			return r.sweepEvery
		}
		r.fireAll(ctx, ss, due)
		if len(due) < scheduleBatch {
			break
		}
	}
	at, err := ss.NextScheduleDue(ctx)
	if err != nil || at.IsZero() {
		return r.sweepEvery
	}
	// A floor, so that clocks that disagree by a hair cannot spin the loop.
	return min(max(time.Until(at), 5*time.Millisecond), r.sweepEvery)
}

// fireAll fires the claimed ticks side by side (at most fireParallel at
// once), so that their runs' commits share the store's group commits
// instead of queueing one behind the other, and returns once all are done.
func (r *Runtime) fireAll(ctx context.Context, ss store.Schedules, due []run.Schedule) {
	if len(due) == 1 {
		r.fire(ctx, ss, due[0])
		return
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, fireParallel)
	for _, s := range due {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			r.fire(ctx, ss, s)
		})
	}
	wg.Wait()
}

// fire starts the run of the tick s claimed and advances s.
func (r *Runtime) fire(ctx context.Context, ss store.Schedules, s run.Schedule) {
	ctx = run.WithTenant(ctx, s.Tenant)
	tick := *s.NextFireAt
	spec, loc, err := parseSchedule(s.Cron, s.TimeZone)
	if err != nil { // checked on create: a record written by something else
		r.log.Warn("schedule has an invalid expression; it is ended", "schedule_id", s.ID, "err", err)
		r.advance(ctx, ss, s, nil)
		return
	}
	sub, err := r.Send(ctx, tickRequest(s, tick))
	catchUp := false
	switch {
	case errdefs.IsNotAvailable(err) || (err != nil && ctx.Err() != nil):
		// The claim lapses and the tick is fired again (idempotently).
		r.noteStoreError(err)
		r.log.Warn("a scheduled run could not be started; the tick will be retried", "schedule_id", s.ID, "tick", tick, "err", err)
		return
	case err != nil:
		// The agent refused it (busy conversation, agent gone): retrying
		// would fail alike, so the tick is skipped.
		r.log.Warn("a scheduled run was refused; the tick is skipped", "schedule_id", s.ID, "tick", tick, "err", err)
	default:
		r.log.Info("schedule fired", "schedule_id", s.ID, "tick", tick, "run_id", sub.Task.ID,
			"duplicate", sub.Duplicate, "delay_ms", time.Since(tick).Milliseconds())
		// A duplicate is a tick its claimant fired and died before
		// advancing: the ticks after it were not fired yet, and the
		// oldest of them is the one a recovery fires.
		catchUp = sub.Duplicate
	}
	r.advance(ctx, ss, s, r.following(spec, loc, s, tick, time.Now(), catchUp))
}

// following is the tick after tick, by the missed-tick policy above: the
// next tick, or, when that is further behind now than the grace and tick
// started a run (not catchUp), the first tick after now.
func (r *Runtime) following(spec cron.Schedule, loc *time.Location, s run.Schedule, tick, now time.Time, catchUp bool) *time.Time {
	next := nextTick(spec, loc, tick, s.EndAt)
	if next != nil && !catchUp && now.Sub(*next) > r.scheduleGrace() {
		next = nextTick(spec, loc, now, s.EndAt)
	}
	return next
}

// advance moves s to next; a tick another replica took over, or a
// schedule deleted meanwhile, is left to them.
func (r *Runtime) advance(ctx context.Context, ss store.Schedules, s run.Schedule, next *time.Time) {
	if err := ss.AdvanceSchedule(ctx, s, next); err != nil {
		if errdefs.IsConflict(err) || errdefs.IsNotFound(err) {
			r.log.Debug("schedule not advanced", "schedule_id", s.ID, "err", err)
			return
		}
		r.noteStoreError(err)
		r.log.Warn("advancing a schedule failed; its claim will lapse and the tick be fired again", "schedule_id", s.ID, "err", err)
	}
}

// tickRequest is the run of s at tick: ids derived from both (so that a
// second firing of the tick is a duplicate), metadata naming them. A run
// into a conversation waits for the one running there, if any.
func tickRequest(s run.Schedule, tick time.Time) SendRequest {
	stamp := tick.UTC().Format(time.RFC3339Nano)
	msg := s.Input
	msg.ID = "schedule:" + s.ID + ":" + stamp
	md := make(map[string]any, len(s.Metadata)+2)
	maps.Copy(md, s.Metadata)
	md[MetaScheduleID], md[MetaScheduleTick] = s.ID, stamp
	req := SendRequest{AgentID: s.AgentID, AssistantID: s.AssistantID, ContextID: s.ContextID, Message: msg, Metadata: md, Await: AwaitNone}
	if s.ContextID == "" {
		req.ContextID = uuid.NewSHA1(scheduleNamespace, []byte(s.Tenant+"\x00"+s.ID+"\x00"+stamp)).String()
	} else {
		req.Multitask = MultitaskEnqueue
	}
	return req
}
