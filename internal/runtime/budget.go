package runtime

import (
	"context"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// An agent's budget per period (Agent.MaxTokensPerPeriod) is counted in
// the store, per tenant and period (store.UsageCounters), so that every
// replica charges and checks the same counter and a restart forgets
// nothing. An attempt is refused when the period's budget is spent before
// it starts, and stopped by the charge that passes it.

// periodKey is the counter the agent's usage is charged to now.
func (x *execution) periodKey() store.UsageKey {
	return store.PeriodOf(x.agent.ID, x.agent.BudgetPeriod, time.Now())
}

// checkPeriod refuses an attempt of an agent whose budget for the current
// period is already spent.
func (x *execution) checkPeriod(ctx context.Context) error {
	lim := x.agent.MaxTokensPerPeriod
	if lim <= 0 {
		return nil
	}
	k := x.periodKey()
	used, err := x.r.st.Usage(ctx, k)
	if err != nil {
		return err
	}
	if used >= lim {
		return errdefs.BudgetExceededf("agent %s has used %d tokens in the period that started at %s, its whole budget max_tokens_per_period of %d (period %v); the next period starts at %s",
			x.agent.ID, used, k.Start.Format(time.RFC3339), lim, k.Period, k.End().Format(time.RFC3339))
	}
	return nil
}

// chargePeriod adds tokens to the agent's counter for the current period
// and stops the run once the counter passes the budget. A charge the store
// refuses is logged, not fatal: the run's own budgets still hold, and an
// outage of the store shows up in its own errors.
func (x *execution) chargePeriod(tokens int64) error {
	lim := x.agent.MaxTokensPerPeriod
	if lim <= 0 || tokens <= 0 {
		return nil
	}
	k := x.periodKey()
	// bg, not ctx: a run being canceled still pays for what it used.
	used, err := x.r.st.AddUsage(x.bg, k, tokens)
	if err != nil {
		x.r.log.Warn("usage not charged to the agent's period budget", "run_id", x.runID, "agent_id", x.agent.ID, "tokens", tokens, "err", err)
		return nil
	}
	if used > lim {
		return errdefs.BudgetExceededf("agent %s used %d tokens in the period that started at %s, over its budget max_tokens_per_period of %d (period %v); the next period starts at %s",
			x.agent.ID, used, k.Start.Format(time.RFC3339), lim, k.Period, k.End().Format(time.RFC3339))
	}
	return nil
}
