package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// spends is an engine that reports n tokens, then answers.
type spends struct{ n int64 }

func (spends) Capabilities() engine.Capabilities { return engine.Capabilities{} }

func (s spends) Execute(ctx context.Context, _ engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
	if err := h.ReportUsage(ctx, "m", model.TokenUsage{InputTokens: s.n, TotalTokens: s.n}); err != nil {
		return b, err
	}
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "spent"))
	return b, nil
}

// spendPlan is a parent engine: it runs a child per entry of children (a
// spends, or a nested spendPlan), then spends own tokens itself; it keeps
// going past a failed child and records what each child's error was.
type spendPlan struct {
	children []engine.Engine
	own      int64
	errs     *[]error
}

func (spendPlan) Capabilities() engine.Capabilities { return engine.Capabilities{} }

func (p spendPlan) Execute(ctx context.Context, r engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
	cr := h.(engine.ChildRunner)
	for i, eng := range p.children {
		step := "c" + itoa(i+1)
		cb := engine.NewBoard()
		cb.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "do "+step))
		_, err := cr.RunChild(ctx, engine.ChildRun{Key: step, Step: step, Run: engine.Run{ParentRunID: r.ID}, Host: dropEvents{h}}, eng, cb)
		*p.errs = append(*p.errs, err)
	}
	if p.own > 0 {
		if err := h.ReportUsage(ctx, "m", model.TokenUsage{InputTokens: p.own, TotalTokens: p.own}); err != nil {
			return b, err
		}
	}
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "done"))
	return b, nil
}

// A child spends a share of what its parent has left (child_share 0.5 of
// a budget of 100): the first child may spend 50 and spends 30; the
// second may spend 35 and spends 40, so it fails budget_exceeded alone —
// its parent reads a failed child, not a spent budget, and goes on to
// spend 20 of its own (90 in all, within its budget). A grandchild
// spends from its parent's share. A child that would start when the
// run has nothing left is refused as the run's spent budget.
func TestChildShare(t *testing.T) {
	var errs []error
	a := testAgent("p", spendPlan{children: []engine.Engine{spends{30}, spends{40}}, own: 20, errs: &errs})
	a.MaxTokensPerRun, a.ChildBudgetShare = 100, 0.5
	r := newTestRuntime(t, nil, a)
	p := wait(t, r, send(t, r, "p", "go").ID)
	if p.State != run.StateCompleted || p.Usage.TotalTokens != 90 {
		t.Fatalf("parent: %s %+v, used %d; want completed, 90 tokens", p.State, p.Error, p.Usage.TotalTokens)
	}
	if len(errs) != 2 || errs[0] != nil {
		t.Fatalf("children's errors: %v", errs)
	}
	if e := errs[1]; e == nil || errdefs.IsBudgetExceeded(e) || !errdefs.IsPublic(e) || !strings.Contains(e.Error(), "budget_exceeded: child run") || !strings.Contains(e.Error(), "over its share of 35") {
		t.Fatalf("the over-share child's error for its parent: %v (class %s), want a public failed child naming its share of 35", e, errdefs.ClassOf(e))
	}
	c2, err := r.GetTask(ctxT(t), childRunID(p.ID, "c2", 0))
	if err != nil || c2.State != run.StateFailed || c2.Error == nil || c2.Error.Class != "budget_exceeded" {
		t.Fatalf("child c2: %+v %v, want failed budget_exceeded", c2, err)
	}

	// Nested: the middle child's share is 50 (half of 100); its own
	// child's is 25 (half of that), and 30 passes it.
	errs = nil
	var inner []error
	a = testAgent("n", spendPlan{children: []engine.Engine{spendPlan{children: []engine.Engine{spends{30}}, errs: &inner}}, errs: &errs})
	a.MaxTokensPerRun, a.ChildBudgetShare = 100, 0.5
	r = newTestRuntime(t, nil, a)
	p = wait(t, r, send(t, r, "n", "go").ID)
	if p.State != run.StateCompleted || len(inner) != 1 || !strings.Contains(errString(inner[0]), "over its share of 25") {
		t.Fatalf("nested: parent %s, grandchild's error %v; want completed, the grandchild over its share of 25", p.State, inner)
	}

	// Spent: the first child spends the whole share (1 × 100) and more;
	// the second is refused, as the parent's budget.
	errs = nil
	a = testAgent("s", spendPlan{children: []engine.Engine{spends{120}, spends{1}}, errs: &errs})
	a.MaxTokensPerRun = 100
	r = newTestRuntime(t, nil, a)
	p = wait(t, r, send(t, r, "s", "go").ID)
	if len(errs) != 2 || !strings.Contains(errString(errs[0]), "over its share of 100") || !errdefs.IsBudgetExceeded(errs[1]) ||
		!strings.Contains(errString(errs[1]), "has spent its budget of tokens: c2 is not started") {
		t.Fatalf("spent: children's errors %v", errs)
	}
	if _, err := r.GetTask(ctxT(t), childRunID(p.ID, "c2", 0)); !errdefs.IsNotFound(err) {
		t.Fatalf("the refused child was stored: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	var sp *shareSpent
	if errors.As(err, &sp) {
		return "unconverted: " + err.Error()
	}
	return err.Error()
}

// A share's arithmetic: unbounded budgets stay unbounded, a resumed child
// keeps what it spent before, and passing any bound is an error naming it.
func TestShareOf(t *testing.T) {
	if s := shareOf("p", unbounded, 0.5, model.TokenUsage{}, 0); s != nil {
		t.Fatalf("an unbounded parent gave a share: %+v", s)
	}
	left := budgetLeft{tokens: 80, input: -1, output: 10, cost: 2}
	s := shareOf("p", left, 0.5, model.TokenUsage{TotalTokens: 7}, 0.25)
	if s.tokens != 47 || s.input != -1 || s.output != 5 || s.cost != 1.25 {
		t.Fatalf("share %+v", s.budgetLeft)
	}
	for _, c := range []struct {
		used model.TokenUsage
		cost float64
		want string
	}{
		{model.TokenUsage{TotalTokens: 47, OutputTokens: 5}, 1.25, ""},
		{model.TokenUsage{TotalTokens: 48}, 0, "used 48 tokens, over its share of 47"},
		{model.TokenUsage{TotalTokens: 9, OutputTokens: 6}, 0, "used 6 output tokens, over its share of 5"},
		{model.TokenUsage{TotalTokens: 9}, 1.5, "cost 1.5, over its share of 1.25"},
	} {
		err := s.check("c", c.used, c.cost)
		if c.want == "" && err != nil || c.want != "" && (!errdefs.IsBudgetExceeded(err) || !strings.Contains(errString(err), c.want)) {
			t.Errorf("check(%+v, %g) = %v, want %q", c.used, c.cost, err, c.want)
		}
	}
	if got := s.minus(model.TokenUsage{TotalTokens: 50, OutputTokens: 1}, 0.5); got.tokens != 0 || got.output != 4 || got.cost != 0.75 || got.spent() != "tokens" {
		t.Fatalf("minus: %+v (%s)", got, got.spent())
	}
}
