package runtime

import (
	"context"

	"agentd/internal/calltree"
	"agentd/internal/engine"
)

// Every run is a node of its request's call tree (package calltree). A
// run started by a message enters its agent onto the chain the message
// carries (the A2A call-tree extension, from a peer), else starts a chain
// of its own; its token and cost budgets are the message's when one came,
// bounded by the agent's max_tokens_per_run and max_cost_per_run. A child run opened through RunChild
// counts against its parent's fan-out and, when it runs another agent (a
// hand-off), enters that agent. The chain's errors fail the run or the
// step that would have opened the child, naming the cycle or the limit.

// enterCallTree is ctx with the attempt's run entered into its call tree.
// leave releases the chain's deadline timer; it is never nil.
func (x *execution) enterCallTree(ctx context.Context) (context.Context, context.CancelFunc, error) {
	in, err := calltree.Parse(x.user[0].Message.Metadata)
	if err != nil {
		return ctx, func() {}, err
	}
	if lim := x.agent.MaxTokensPerRun; lim > 0 {
		if in == nil {
			in = &calltree.Chain{}
		}
		if in.BudgetTokens == 0 || lim < in.BudgetTokens {
			in.BudgetTokens = lim
		}
	}
	if lim := x.agent.MaxCostPerRun; lim > 0 {
		if in == nil {
			in = &calltree.Chain{}
		}
		if in.BudgetCost == 0 || lim < in.BudgetCost {
			in.BudgetCost = lim
		}
	}
	return calltree.Root(ctx, x.r.calls, in, x.agent.ID)
}

// enterChild is ctx for the child c of the run of ctx: the child counted
// against the run's fan-out, and its agent entered when it is another one
// (a hand-off; a workflow's step runs the workflow's agent).
func enterChild(ctx context.Context, c engine.ChildRun) (context.Context, error) {
	if err := calltree.Spawn(ctx); err != nil {
		return ctx, err
	}
	if c.AgentID == "" || c.AgentID == calltree.Current(ctx) {
		return ctx, nil
	}
	return calltree.Enter(ctx, c.AgentID)
}
