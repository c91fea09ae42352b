package calltree

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"agentd/internal/errdefs"
)

// Defaults of Limits.
const (
	DefaultMaxDepth  = 8
	DefaultMaxFanOut = 256
)

// Limits bound the call tree of the runs a server starts.
type Limits struct {
	// MaxDepth is how many agents one chain may hold, the root's included
	// (0: DefaultMaxDepth). A chain that arrives from a peer keeps its own
	// limit when that is lower.
	MaxDepth int
	// MaxFanOut is how many children one run may open (0:
	// DefaultMaxFanOut).
	MaxFanOut int
	// Server names this server in the links of the chain, so that two
	// servers' agents of the same id are told apart.
	Server string
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxFanOut <= 0 {
		l.MaxFanOut = DefaultMaxFanOut
	}
	return l
}

// Link is one agent of a chain.
type Link struct {
	Agent  string `json:"agent"`
	Server string `json:"server,omitempty"`
}

func (l Link) String() string { return l.Agent }

// Chain is the path of a run in its call tree, with the tree's limits.
type Chain struct {
	// Links are the agents from the root down to the current run's.
	Links []Link
	// MaxDepth bounds len(Links).
	MaxDepth int
	// Deadline, when set, ends every run of the tree.
	Deadline time.Time
	// BudgetTokens, when positive, is what the tree may still spend.
	BudgetTokens int64
	// BudgetCost, when positive, is what the tree may still cost, in the
	// prices' currency.
	BudgetCost float64

	limits Limits
	// children counts the children of the current run (Spawn).
	children *atomic.Int64
	// spent counts the tokens the tree's runs in this process used since
	// its root here (Charge); spentMicro their cost in millionths (ChargeCost).
	spent      *atomic.Int64
	spentMicro *atomic.Int64
}

type ctxKey struct{}

// FromContext returns the chain of ctx's run; ok is false outside any.
func FromContext(ctx context.Context) (Chain, bool) {
	c, ok := ctx.Value(ctxKey{}).(Chain)
	return c, ok
}

// Root starts the chain of a run of agent on a server with limits, or
// continues incoming (a chain received from a peer, Parse): the agent is
// entered onto it. The returned context carries the chain and the tree's
// deadline.
func Root(ctx context.Context, limits Limits, incoming *Chain, agent string) (context.Context, context.CancelFunc, error) {
	limits = limits.withDefaults()
	c := Chain{MaxDepth: limits.MaxDepth}
	if incoming != nil {
		c = *incoming
		if c.MaxDepth <= 0 || c.MaxDepth > limits.MaxDepth {
			c.MaxDepth = limits.MaxDepth
		}
	}
	c.limits = limits
	l := Link{Agent: agent, Server: limits.Server}
	if err := c.admits(l); err != nil {
		return ctx, func() {}, err
	}
	// A root's counters, and its one link when it starts the tree, share
	// one allocation: every run starts a root.
	root := new(rootState)
	next := c
	if len(c.Links) == 0 {
		root.link[0] = l
		next.Links = root.link[:]
	} else {
		next.Links = append(slices.Clip(c.Links), l)
	}
	next.children, next.spent, next.spentMicro = &root.children, &root.spent, &root.spentMicro
	ctx = context.WithValue(ctx, ctxKey{}, next)
	if !next.Deadline.IsZero() {
		ctx, cancel := context.WithDeadline(ctx, next.Deadline)
		return ctx, cancel, nil
	}
	return ctx, func() {}, nil
}

// Enter is ctx with agent entered onto its chain: the run about to start
// on this server calls agent. Outside any chain it returns ctx unchanged.
// The error is a Conflict naming the cycle when agent is already on the
// chain, a BudgetExceeded when the chain is at its depth limit.
func Enter(ctx context.Context, agent string) (context.Context, error) {
	c, ok := FromContext(ctx)
	if !ok {
		return ctx, nil
	}
	next, err := c.enter(Link{Agent: agent, Server: c.limits.Server})
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, ctxKey{}, next), nil
}

// rootState is what a root's chain points to.
type rootState struct {
	link                        [1]Link
	children, spent, spentMicro atomic.Int64
}

// enter appends l to a copy of c.
func (c Chain) enter(l Link) (Chain, error) {
	if err := c.admits(l); err != nil {
		return c, err
	}
	next := c
	next.Links = append(slices.Clip(c.Links), l)
	next.children = new(atomic.Int64)
	return next, nil
}

// admits is nil when l may be entered onto c, else why not.
func (c Chain) admits(l Link) error {
	if len(c.Links) >= c.MaxDepth {
		return errdefs.BudgetExceededf("call depth: calling agent %s from %s would make the call chain %d agents long, over its limit max_call_depth of %d",
			l, path(c.Links), len(c.Links)+1, c.MaxDepth)
	}
	for i, on := range c.Links {
		if on == l {
			return errdefs.Conflictf("call cycle %s → %s: agent %s is already on this request's call chain; it would call itself until the depth limit",
				path(c.Links[i:]), l, l)
		}
	}
	if !c.Deadline.IsZero() && !time.Now().Before(c.Deadline) {
		return errdefs.Timeoutf("call deadline: the request's deadline %s passed before agent %s was called", c.Deadline.UTC().Format(time.RFC3339), l)
	}
	if c.BudgetTokens > 0 && c.Remaining() <= 0 {
		return errdefs.BudgetExceededf("call budget: the request's budget of %d tokens is spent; agent %s is not called", c.BudgetTokens, l)
	}
	return nil
}

// Spawn counts a child the run of ctx opens; the error is a
// BudgetExceeded once the run has opened its fan-out limit. Outside any
// chain it allows everything.
func Spawn(ctx context.Context) error {
	c, ok := FromContext(ctx)
	if !ok || c.children == nil {
		return nil
	}
	lim := c.limits.withDefaults().MaxFanOut
	if n := c.children.Add(1); n > int64(lim) {
		return errdefs.BudgetExceededf("call fan-out: run of agent %s opened %d child runs, over its limit max_fan_out of %d", c.current(), n, lim)
	}
	return nil
}

// Current is the agent of ctx's run on its chain ("" outside any).
func Current(ctx context.Context) string {
	c, _ := FromContext(ctx)
	return c.current().Agent
}

// current is the agent of the chain's run.
func (c Chain) current() Link {
	if len(c.Links) == 0 {
		return Link{}
	}
	return c.Links[len(c.Links)-1]
}

// path prints links as "a → b → c".
func path(links []Link) string {
	s := make([]string, len(links))
	for i, l := range links {
		s[i] = l.String()
	}
	return strings.Join(s, " → ")
}

// String prints the chain's agents.
func (c Chain) String() string { return fmt.Sprintf("[%s]", path(c.Links)) }

// Remaining is the token budget the tree has left (meaningful when
// BudgetTokens is positive).
func (c Chain) Remaining() int64 {
	if c.spent == nil {
		return c.BudgetTokens
	}
	return c.BudgetTokens - c.spent.Load()
}

// Charge counts tokens the run of ctx used against its tree's budget; the
// error is a BudgetExceeded once the budget is passed. Outside any chain,
// or without a budget, it only counts.
func Charge(ctx context.Context, tokens int64) error {
	c, ok := FromContext(ctx)
	if !ok || c.spent == nil || tokens <= 0 {
		return nil
	}
	spent := c.spent.Add(tokens)
	if c.BudgetTokens > 0 && spent > c.BudgetTokens {
		return errdefs.BudgetExceededf("call budget: the request's call tree used %d tokens, over its budget of %d", spent, c.BudgetTokens)
	}
	return nil
}

// RemainingCost is the cost budget the tree has left (meaningful when
// BudgetCost is positive).
func (c Chain) RemainingCost() float64 {
	if c.spentMicro == nil {
		return c.BudgetCost
	}
	return c.BudgetCost - float64(c.spentMicro.Load())/1e6
}

// ChargeCost counts what the run of ctx cost against its tree's cost
// budget; the error is a BudgetExceeded once the budget is passed.
// Outside any chain, or without a budget, it only counts.
func ChargeCost(ctx context.Context, cost float64) error {
	c, ok := FromContext(ctx)
	if !ok || c.spentMicro == nil || cost <= 0 {
		return nil
	}
	spent := float64(c.spentMicro.Add(int64(math.Round(cost*1e6)))) / 1e6
	if c.BudgetCost > 0 && spent > c.BudgetCost {
		return errdefs.BudgetExceededf("call budget: the request's call tree cost %.6g, over its budget of %.6g", spent, c.BudgetCost)
	}
	return nil
}
