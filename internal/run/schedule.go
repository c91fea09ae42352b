package run

import (
	"time"

	"agentd/internal/model"
)

// Schedule starts runs of an agent on a cron schedule: at each tick an
// ordinary run of AgentID with Input as its user message, in the
// conversation ContextID (a run into an existing conversation) or, when
// it is empty, in a new conversation per tick.
type Schedule struct {
	ID string `json:"id"`
	// Tenant is the schedule's tenant; the store sets it from the context
	// on create, and fills it in where it answers across tenants
	// (ClaimDueSchedules).
	Tenant  string `json:"-"`
	AgentID string `json:"agent_id"`
	// AssistantID, when set, names a stored assistant of AgentID: each
	// tick's run runs on its latest version when it fires.
	AssistantID string `json:"assistant_id,omitempty"`
	ContextID   string `json:"context_id,omitempty"`
	// Cron is the schedule's expression (five fields, an optional
	// leading seconds field, or a descriptor such as @hourly or
	// "@every 90s"), read in TimeZone ("" is UTC).
	Cron     string         `json:"cron"`
	TimeZone string         `json:"timezone,omitempty"`
	Input    model.Message  `json:"input"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// EndAt, when set, is when the schedule stops: no tick at or after it
	// fires.
	EndAt *time.Time `json:"end_at,omitempty"`
	// NextFireAt is the next tick due; nil once the schedule has ended.
	NextFireAt *time.Time `json:"next_fire_at,omitempty"`
	// ClaimedBy is the replica that claimed the due tick NextFireAt
	// (ClaimDueSchedules), until it advances the schedule or its claim
	// expires.
	ClaimedBy string `json:"-"`
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ScheduleQuery selects a tenant's schedules, oldest first (by creation).
type ScheduleQuery struct {
	// AgentID and ContextID, when set, keep the schedules of that agent
	// and of that conversation.
	AgentID   string
	ContextID string
	// AssistantID, when set, keeps the schedules that run on that stored
	// assistant.
	AssistantID string
	// Metadata, when set, keeps schedules whose metadata holds every key
	// with an equal value.
	Metadata map[string]any
	// Offset skips that many matches; Limit bounds the page (default 10,
	// at most 1000).
	Offset int
	Limit  int
}

// SchedulePageLimit returns q's limit, defaulted and bounded.
func (q ScheduleQuery) SchedulePageLimit() int { return pageLimit(q.Limit, 10) }
