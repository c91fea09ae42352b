package runtime

import (
	"context"
	"fmt"
	"math"

	"agentd/internal/calltree"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// A run's token and cost budgets (max_tokens_per_run, its input and
// output halves, max_cost_per_run, and a call-tree budget that came with
// the message) cover its whole call tree. A child run — a workflow step,
// a hand-off, a peer or agent called as a tool — spends from its parent's
// budget through a share: when it opens, the child may spend what the
// parent has left then (times the agent's child_share), plus what it had
// spent itself before (a resumed child). A child that passes its share
// ends budget_exceeded; its parent's engine gets a failed child, not a
// spent budget, and decides — a workflow by its failure strategy, a loop
// agent by reading the failed tool call. The usage a child reports is the
// parent's too (its totals, its tenant's counters, the agent's total and
// period budgets), but only the child's share judges it: the parent's own
// per-run budgets judge the parent's own model calls, and a child opened
// when nothing is left is refused as the parent's spent budget.

// budgetLeft is what a run may still spend; a negative field is
// unbounded.
type budgetLeft struct {
	tokens, input, output int64
	cost                  float64
}

var unbounded = budgetLeft{tokens: -1, input: -1, output: -1, cost: -1}

// budgetShare is what one child run may spend in all, and whose budget it
// is a share of (for messages).
type budgetShare struct {
	budgetLeft
	parent string
}

// childChargeKey marks the context of usage a child run passes up to its
// parent: the child's share has judged it already.
type childChargeKey struct{}

func withChildCharge(ctx context.Context) context.Context {
	return context.WithValue(ctx, childChargeKey{}, true)
}

func isChildCharge(ctx context.Context) bool {
	v, _ := ctx.Value(childChargeKey{}).(bool)
	return v
}

// ReportUsage accumulates usage (by model, too) and enforces the budgets:
// all of them for the run's own model calls; for usage its children pass
// up, only the agent's total and period budgets (their shares judged the
// rest).
func (h *host) ReportUsage(ctx context.Context, modelName string, u model.TokenUsage) error {
	own := !isChildCharge(ctx)
	err := h.x.addUsage(modelName, u, own)
	terr := calltree.Charge(ctx, u.Add(model.TokenUsage{}).TotalTokens)
	if own && err == nil {
		err = terr
	}
	if cost, _ := h.x.r.Cost(map[string]model.TokenUsage{modelName: u}); cost != nil {
		if cerr := calltree.ChargeCost(ctx, *cost); own && err == nil {
			err = cerr
		}
	}
	return err
}

// left is what the run of x may still spend, as its own budgets and its
// call tree's say, or, for a child run, as its share says.
func (x *execution) left(ctx context.Context, share *budgetShare) budgetLeft {
	x.mu.Lock()
	used := x.task.Usage.Add(x.usage)
	byModel := mergeModelUsage(x.task.ModelUsage, x.modelUsage)
	x.mu.Unlock()
	spent := x.r.spent(byModel)
	if share != nil {
		return share.minus(used, spent)
	}
	l := budgetLeft{
		tokens: limitLeft(x.agent.MaxTokensPerRun, used.TotalTokens),
		input:  limitLeft(x.agent.MaxInputTokensPerRun, used.InputTokens),
		output: limitLeft(x.agent.MaxOutputTokensPerRun, used.OutputTokens),
		cost:   -1,
	}
	if lim := x.agent.MaxCostPerRun; lim > 0 {
		l.cost = max(lim-spent, 0)
	}
	if c, ok := calltree.FromContext(ctx); ok {
		if c.BudgetTokens > 0 {
			l.tokens = minLeft(l.tokens, max(c.Remaining(), 0))
		}
		if c.BudgetCost > 0 {
			l.cost = minLeftF(l.cost, max(c.RemainingCost(), 0))
		}
	}
	return l
}

// minus is what remains of the share once used and cost are spent.
func (s *budgetShare) minus(used model.TokenUsage, cost float64) budgetLeft {
	l := s.budgetLeft
	if l.tokens >= 0 {
		l.tokens = max(l.tokens-used.TotalTokens, 0)
	}
	if l.input >= 0 {
		l.input = max(l.input-used.InputTokens, 0)
	}
	if l.output >= 0 {
		l.output = max(l.output-used.OutputTokens, 0)
	}
	if l.cost >= 0 {
		l.cost = max(l.cost-cost, 0)
	}
	return l
}

// spent names the first budget with nothing left ("" when none).
func (l budgetLeft) spent() string {
	switch {
	case l.tokens == 0:
		return "tokens"
	case l.input == 0:
		return "input tokens"
	case l.output == 0:
		return "output tokens"
	case l.cost == 0:
		return "cost"
	}
	return ""
}

// shareOf is the share of a child that has already spent used (and cost)
// and may spend frac of left more.
func shareOf(parent string, left budgetLeft, frac float64, used model.TokenUsage, cost float64) *budgetShare {
	if left == unbounded {
		return nil
	}
	part := func(n, had int64) int64 {
		if n < 0 {
			return -1
		}
		return had + int64(math.Floor(float64(n)*frac))
	}
	s := &budgetShare{parent: parent, budgetLeft: budgetLeft{
		tokens: part(left.tokens, used.TotalTokens),
		input:  part(left.input, used.InputTokens),
		output: part(left.output, used.OutputTokens),
		cost:   -1,
	}}
	if left.cost >= 0 {
		s.cost = cost + left.cost*frac
	}
	return s
}

// check is the error of a child run that used (and cost) more than its
// share: a BudgetExceeded for the child, which RunChild turns into a
// failed child for the parent (overShare).
func (s *budgetShare) check(child string, used model.TokenUsage, cost float64) error {
	if s == nil {
		return nil
	}
	for _, b := range []struct {
		what      string
		used, lim int64
	}{
		{"tokens", used.TotalTokens, s.tokens},
		{"input tokens", used.InputTokens, s.input},
		{"output tokens", used.OutputTokens, s.output},
	} {
		if b.lim >= 0 && b.used > b.lim {
			return errdefs.BudgetExceeded(&shareSpent{child: child, msg: fmt.Sprintf(
				"child run %s used %d %s, over its share of %d of run %s's budget", child, b.used, b.what, b.lim, s.parent)})
		}
	}
	if s.cost >= 0 && cost > s.cost {
		return errdefs.BudgetExceeded(&shareSpent{child: child, msg: fmt.Sprintf(
			"child run %s cost %.6g, over its share of %.6g of run %s's cost budget", child, cost, s.cost, s.parent)})
	}
	return nil
}

// shareSpent is the reason of a child that passed its share.
type shareSpent struct {
	child, msg string
}

func (e *shareSpent) Error() string { return e.msg }

// overShare is what the parent's engine reads of a child that passed its
// share: the child failed. It is deliberately no BudgetExceeded — that
// would tell the parent's engine its own budget is spent, and a workflow
// stops on it whatever its failure strategy — and it is public: its text
// names runs and budgets, nothing internal.
func overShare(err error) error {
	return errdefs.Public(childFailed{msg: "budget_exceeded: " + err.Error()})
}

type childFailed struct{ msg string }

func (e childFailed) Error() string { return e.msg }

func limitLeft(lim, used int64) int64 {
	if lim <= 0 {
		return -1
	}
	return max(lim-used, 0)
}

func minLeft(a, b int64) int64 {
	if a < 0 {
		return b
	}
	return min(a, b)
}

func minLeftF(a, b float64) float64 {
	if a < 0 {
		return b
	}
	return min(a, b)
}
