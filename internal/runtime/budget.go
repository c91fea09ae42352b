package runtime

import (
	"context"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
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

// addUsage accumulates usage and checks the budgets: the run's own
// per-run budgets only when own (see budget_share.go), the agent's total
// and period budgets always.
func (x *execution) addUsage(modelName string, u model.TokenUsage, own bool) error {
	x.mu.Lock()
	x.usage = x.usage.Add(u)
	x.modelUsage = addModelUsage(x.modelUsage, modelName, u)
	// The run's usage: its earlier attempts' (recorded on the task, which
	// only this execution writes, at its end) and this one's.
	run := x.task.Usage.Add(x.usage)
	x.mu.Unlock()
	tokens := u.Add(model.TokenUsage{}).TotalTokens
	agentTotal := x.r.agentUsage(x.agent.ID).add(tokens)
	// Every counter is charged before any budget is checked.
	periodErr := x.chargePeriod(tokens)
	for _, b := range []struct {
		name      string
		used, lim int64
	}{
		{"max_tokens_per_run", run.TotalTokens, x.agent.MaxTokensPerRun},
		{"max_input_tokens_per_run", run.InputTokens, x.agent.MaxInputTokensPerRun},
		{"max_output_tokens_per_run", run.OutputTokens, x.agent.MaxOutputTokensPerRun},
	} {
		if own && b.lim > 0 && b.used > b.lim {
			return errdefs.BudgetExceededf("run %s used %d tokens, over the agent's budget %s of %d", x.runID, b.used, b.name, b.lim)
		}
	}
	if lim := x.agent.MaxTokensTotal; lim > 0 && agentTotal > lim {
		return errdefs.BudgetExceededf("agent %s used %d tokens, over its total budget of %d", x.agent.ID, agentTotal, lim)
	}
	return periodErr
}
