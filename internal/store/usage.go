package store

import (
	"context"
	"time"

	"agentd/internal/errdefs"
)

// UsageKey names one usage counter: the tokens an agent's runs used in one
// period, in the context's tenant. A counter lives in the store, so every
// replica charges and reads the same one, and it outlives restarts.
type UsageKey struct {
	AgentID string
	// Period is the length of the agent's budget period and Start the
	// beginning of this one (see PeriodOf). A configuration that changes
	// the length starts new counters rather than reinterpreting old ones.
	Period time.Duration
	Start  time.Time
}

// PeriodOf returns the key of agent's period of length period that
// contains t. Periods are aligned to the Unix epoch in UTC, so that
// replicas agree on them without coordinating (a 24h period runs from
// midnight UTC to midnight UTC).
func PeriodOf(agentID string, period time.Duration, t time.Time) UsageKey {
	return UsageKey{AgentID: agentID, Period: period, Start: t.UTC().Truncate(period)}
}

// End is the first instant after the period.
func (k UsageKey) End() time.Time { return k.Start.Add(k.Period) }

// UsageCounters keeps the durable per-agent, per-period token counters that
// budgets per period are checked against.
type UsageCounters interface {
	// AddUsage adds tokens to the counter k (in the context's tenant),
	// creating it at zero, atomically, and returns its new value. It is
	// not retried by the store: a charge whose answer was lost may or may
	// not have been counted.
	AddUsage(ctx context.Context, k UsageKey, tokens int64) (int64, error)
	// Usage returns the counter k's value (0 for a counter never charged).
	Usage(ctx context.Context, k UsageKey) (int64, error)
}

// ValidateUsage checks a counter's key and a charge, for the stores.
func ValidateUsage(k UsageKey, tokens int64) error {
	switch {
	case k.AgentID == "":
		return errdefs.Validationf("usage counter: agent id is required")
	case k.Period < time.Second || k.Period%time.Second != 0:
		return errdefs.Validationf("usage counter of agent %q: period %v must be a whole number of seconds", k.AgentID, k.Period)
	case tokens < 0:
		return errdefs.Validationf("usage counter of agent %q: charge of %d tokens must not be negative", k.AgentID, tokens)
	}
	return nil
}
