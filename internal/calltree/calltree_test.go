package calltree_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentd/internal/calltree"
	"agentd/internal/errdefs"
)

func root(t *testing.T, lim calltree.Limits, in *calltree.Chain, agent string) context.Context {
	t.Helper()
	ctx, cancel, err := calltree.Root(t.Context(), lim, in, agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	return ctx
}

// An agent already on the chain is refused with the cycle named; a chain
// at its depth limit refuses one more agent; siblings do not count as a
// cycle.
func TestEnterCycleAndDepth(t *testing.T) {
	ctx := root(t, calltree.Limits{MaxDepth: 4, Server: "s1"}, nil, "a")
	b, err := calltree.Enter(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := calltree.Enter(ctx, "b"); err != nil {
		t.Fatalf("a sibling of b: %v", err)
	}
	c, err := calltree.Enter(b, "c")
	if err != nil {
		t.Fatal(err)
	}
	_, err = calltree.Enter(c, "b")
	if !errdefs.IsConflict(err) || !strings.Contains(err.Error(), "call cycle b → c → b") {
		t.Fatalf("b again under c: %v, want a conflict naming b → c → b", err)
	}
	d, err := calltree.Enter(c, "d")
	if err != nil {
		t.Fatal(err)
	}
	_, err = calltree.Enter(d, "e")
	if !errdefs.IsBudgetExceeded(err) || !strings.Contains(err.Error(), "max_call_depth of 4") || !strings.Contains(err.Error(), "a → b → c → d") {
		t.Fatalf("a fifth agent: %v, want budget_exceeded naming the chain and the limit", err)
	}
}

// A run opens at most its fan-out limit of children.
func TestSpawnFanOut(t *testing.T) {
	ctx := root(t, calltree.Limits{MaxFanOut: 3}, nil, "a")
	for i := range 3 {
		if err := calltree.Spawn(ctx); err != nil {
			t.Fatalf("child %d: %v", i+1, err)
		}
	}
	if err := calltree.Spawn(ctx); !errdefs.IsBudgetExceeded(err) || !strings.Contains(err.Error(), "max_fan_out of 3") {
		t.Fatalf("a fourth child: %v", err)
	}
	child, err := calltree.Enter(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if err := calltree.Spawn(child); err != nil {
		t.Fatalf("b's own first child: %v", err)
	}
}

// The chain crosses servers in message metadata: the receiving server
// enters its agent, keeps the lower depth limit, the deadline and the
// budget left, and refuses a cycle through the first server.
func TestMetadataRoundTrip(t *testing.T) {
	deadline := time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	ctx := root(t, calltree.Limits{MaxDepth: 5, Server: "s1"}, &calltree.Chain{Deadline: deadline, BudgetTokens: 100}, "a")
	if err := calltree.Charge(ctx, 30); err != nil {
		t.Fatal(err)
	}
	in, err := calltree.Parse(calltree.Outgoing(ctx))
	if err != nil || in == nil {
		t.Fatalf("parse: %v %v", in, err)
	}
	if in.MaxDepth != 5 || !in.Deadline.Equal(deadline) || in.BudgetTokens != 70 || len(in.Links) != 1 || in.Links[0] != (calltree.Link{Agent: "a", Server: "s1"}) {
		t.Fatalf("received %+v", in)
	}
	peer := root(t, calltree.Limits{MaxDepth: 8, Server: "s2"}, in, "a")
	got, _ := calltree.FromContext(peer)
	if got.MaxDepth != 5 || len(got.Links) != 2 {
		t.Fatalf("peer chain %+v: want the caller's lower limit and both links", got)
	}
	if d, ok := peer.Deadline(); !ok || !d.Equal(deadline) {
		t.Fatalf("peer deadline %v %v", d, ok)
	}
	back, err := calltree.Parse(calltree.Outgoing(peer))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := calltree.Root(t.Context(), calltree.Limits{Server: "s1"}, back, "a"); !errdefs.IsConflict(err) {
		t.Fatalf("back to s1's a: %v, want the cycle refused", err)
	}
	if err := calltree.Charge(peer, 71); !errdefs.IsBudgetExceeded(err) {
		t.Fatalf("spending past the budget left: %v", err)
	}
	if _, err := calltree.Parse(map[string]any{calltree.ExtensionURI: map[string]any{"chain": []any{map[string]any{}}}}); !errdefs.IsValidation(err) {
		t.Fatalf("a link without an agent: %v", err)
	}
}

// A cost budget is charged like the token budget, travels to a peer as
// what is left, and stops the tree once passed; a negative one on the
// wire is refused.
func TestCostBudget(t *testing.T) {
	ctx := root(t, calltree.Limits{Server: "s1"}, &calltree.Chain{BudgetCost: 0.10}, "a")
	if err := calltree.ChargeCost(ctx, 0.04); err != nil {
		t.Fatal(err)
	}
	in, err := calltree.Parse(calltree.Outgoing(ctx))
	if err != nil || in == nil || in.BudgetCost < 0.0599 || in.BudgetCost > 0.0601 {
		t.Fatalf("the peer receives %+v (%v), want a cost budget of 0.06 left", in, err)
	}
	peer := root(t, calltree.Limits{Server: "s2"}, in, "b")
	if err := calltree.ChargeCost(peer, 0.05); err != nil {
		t.Fatalf("within what is left: %v", err)
	}
	if err := calltree.ChargeCost(peer, 0.02); !errdefs.IsBudgetExceeded(err) || !strings.Contains(err.Error(), "over its budget of 0.06") {
		t.Fatalf("past what is left: %v, want budget_exceeded naming the budget", err)
	}
	if _, err := calltree.Parse(map[string]any{calltree.ExtensionURI: map[string]any{"chain": []any{}, "budgetCost": -1}}); !errdefs.IsValidation(err) {
		t.Fatalf("a negative cost budget: %v", err)
	}
}
