package memstore

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// scheduleTable holds the schedules (store.Schedules), apart from the
// runs: its own lock, taken without s.mu.
type scheduleTable struct {
	mu sync.Mutex
	// byTenant maps a tenant to its schedules by id.
	byTenant map[string]map[string]*scheduleRecord
	sequence int64
}

// scheduleRecord keeps a schedule as JSON (nothing mutable is shared with
// callers) beside the fields the scheduler changes.
type scheduleRecord struct {
	doc        []byte // the schedule without NextFireAt, ClaimedBy, Tenant
	meta       []byte // its metadata, for search
	next       *time.Time
	claimedBy  string
	claimUntil time.Time
	updatedAt  time.Time
	sequence   int64
}

var _ store.Schedules = (*Store)(nil)

// CreateSchedule stores s; an existing id is a Conflict.
func (s *Store) CreateSchedule(ctx context.Context, sc run.Schedule) (run.Schedule, error) {
	if err := live(ctx); err != nil {
		return run.Schedule{}, err
	}
	if err := store.ValidateSchedule(sc); err != nil {
		return run.Schedule{}, err
	}
	at := now()
	sc.CreatedAt, sc.UpdatedAt, sc.ClaimedBy, sc.Tenant = at, at, "", run.TenantFrom(ctx)
	next := storedPtr(sc.NextFireAt)
	sc.NextFireAt, sc.EndAt = nil, storedPtr(sc.EndAt)
	doc, err := json.Marshal(sc)
	if err != nil {
		return run.Schedule{}, errdefs.Validationf("memstore: create schedule %q: %v", sc.ID, err)
	}
	meta, _ := json.Marshal(sc.Metadata)
	tt := &s.schedules
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.byTenant == nil {
		tt.byTenant = map[string]map[string]*scheduleRecord{}
	}
	m := tt.byTenant[sc.Tenant]
	if m == nil {
		m = map[string]*scheduleRecord{}
		tt.byTenant[sc.Tenant] = m
	}
	if _, ok := m[sc.ID]; ok {
		return run.Schedule{}, errdefs.Conflictf("schedule %q already exists", sc.ID)
	}
	tt.sequence++
	rec := &scheduleRecord{doc: doc, meta: meta, next: next, updatedAt: at, sequence: tt.sequence}
	m[sc.ID] = rec
	return rec.decode(sc.Tenant), nil
}

// GetSchedule returns the schedule of the context's tenant.
func (s *Store) GetSchedule(ctx context.Context, id string) (run.Schedule, error) {
	if err := live(ctx); err != nil {
		return run.Schedule{}, err
	}
	tt := &s.schedules
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tenant := run.TenantFrom(ctx)
	rec, ok := tt.byTenant[tenant][id]
	if !ok {
		return run.Schedule{}, errdefs.NotFoundf("schedule %q not found", id)
	}
	return rec.decode(tenant), nil
}

// DeleteSchedule deletes the schedule.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	if err := live(ctx); err != nil {
		return err
	}
	tt := &s.schedules
	tt.mu.Lock()
	defer tt.mu.Unlock()
	m := tt.byTenant[run.TenantFrom(ctx)]
	if _, ok := m[id]; !ok {
		return errdefs.NotFoundf("schedule %q not found", id)
	}
	delete(m, id)
	return nil
}

// SearchSchedules returns one page of the matching schedules, oldest first.
func (s *Store) SearchSchedules(ctx context.Context, q run.ScheduleQuery) ([]run.Schedule, int, error) {
	if err := live(ctx); err != nil {
		return nil, 0, err
	}
	want, err := encodeValues(q.Metadata)
	if err != nil {
		return nil, 0, errdefs.Validationf("memstore: search schedules: metadata: %v", err)
	}
	tenant := run.TenantFrom(ctx)
	tt := &s.schedules
	tt.mu.Lock()
	var matches []run.Schedule
	var order []int64
	for _, rec := range tt.byTenant[tenant] {
		sc := rec.decode(tenant)
		if (q.AgentID == "" || sc.AgentID == q.AgentID) && (q.ContextID == "" || sc.ContextID == q.ContextID) &&
			(q.AssistantID == "" || sc.AssistantID == q.AssistantID) &&
			(threadRecord{meta: rec.meta}).holds(want) {
			matches, order = append(matches, sc), append(order, rec.sequence)
		}
	}
	tt.mu.Unlock()
	idx := make([]int, len(matches))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return order[idx[i]] < order[idx[j]] })
	total := len(matches)
	from := min(max(q.Offset, 0), total)
	to := min(from+q.SchedulePageLimit(), total)
	page := make([]run.Schedule, 0, to-from)
	for _, i := range idx[from:to] {
		page = append(page, matches[i])
	}
	return page, total, nil
}

// ClaimDueSchedules claims the due schedules of every tenant for owner.
func (s *Store) ClaimDueSchedules(ctx context.Context, owner string, at time.Time, ttl time.Duration, limit int) ([]run.Schedule, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	tt := &s.schedules
	tt.mu.Lock()
	defer tt.mu.Unlock()
	var out []run.Schedule
	for tenant, m := range tt.byTenant {
		for _, rec := range m {
			if len(out) >= limit {
				return out, nil
			}
			if rec.next == nil || rec.next.After(at) || (rec.claimedBy != "" && rec.claimUntil.After(at)) {
				continue
			}
			rec.claimedBy, rec.claimUntil = owner, at.Add(ttl)
			out = append(out, rec.decode(tenant))
		}
	}
	return out, nil
}

// AdvanceSchedule moves a claimed schedule to its next tick.
func (s *Store) AdvanceSchedule(ctx context.Context, sc run.Schedule, next *time.Time) error {
	if err := live(ctx); err != nil {
		return err
	}
	tt := &s.schedules
	tt.mu.Lock()
	defer tt.mu.Unlock()
	rec, ok := tt.byTenant[sc.Tenant][sc.ID]
	switch {
	case !ok:
		return errdefs.NotFoundf("schedule %q not found", sc.ID)
	case rec.claimedBy != sc.ClaimedBy || rec.next == nil || sc.NextFireAt == nil || !rec.next.Equal(*sc.NextFireAt):
		return errdefs.Conflictf("schedule %q: the tick was claimed by another replica", sc.ID)
	}
	rec.next, rec.claimedBy, rec.claimUntil, rec.updatedAt = storedPtr(next), "", time.Time{}, now()
	return nil
}

// NextScheduleDue is when a schedule can next be claimed.
func (s *Store) NextScheduleDue(ctx context.Context) (time.Time, error) {
	if err := live(ctx); err != nil {
		return time.Time{}, err
	}
	tt := &s.schedules
	tt.mu.Lock()
	defer tt.mu.Unlock()
	var first time.Time
	for _, m := range tt.byTenant {
		for _, rec := range m {
			if rec.next == nil {
				continue
			}
			at := *rec.next
			if rec.claimedBy != "" && rec.claimUntil.After(at) {
				at = rec.claimUntil
			}
			if first.IsZero() || at.Before(first) {
				first = at
			}
		}
	}
	return first, nil
}

func (r *scheduleRecord) decode(tenant string) run.Schedule {
	var sc run.Schedule
	_ = json.Unmarshal(r.doc, &sc) // encoded by us
	sc.Tenant, sc.NextFireAt, sc.ClaimedBy, sc.UpdatedAt = tenant, storedPtr(r.next), r.claimedBy, r.updatedAt
	return sc
}

// storedPtr is a copy of *t as stores keep times, nil for nil.
func storedPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := store.StoredTime(*t)
	return &v
}
