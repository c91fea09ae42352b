package calltree

import (
	"context"
	"encoding/json"
	"time"

	"agentd/internal/errdefs"
)

// ExtensionURI identifies agentd's call-tree extension of A2A: the chain
// of a call, its depth limit, deadline and token budget, in a message's
// metadata under this key. Every agentd card declares it.
const ExtensionURI = "https://agentd.dev/a2a/ext/call-tree/v1"

// wire is the extension's metadata value.
type wire struct {
	Chain        []Link  `json:"chain"`
	MaxDepth     int     `json:"maxDepth,omitempty"`
	Deadline     string  `json:"deadline,omitempty"`
	BudgetTokens int64   `json:"budgetTokens,omitempty"`
	BudgetCost   float64 `json:"budgetCost,omitempty"`
}

// Outgoing is the metadata a call from ctx's run to a peer carries: the
// chain, the depth limit, the deadline (the chain's, or ctx's own when
// sooner) and the token budget left. Outside any chain it is nil.
func Outgoing(ctx context.Context) map[string]any {
	c, ok := FromContext(ctx)
	if !ok {
		return nil
	}
	w := wire{Chain: c.Links, MaxDepth: c.MaxDepth}
	deadline := c.Deadline
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if !deadline.IsZero() {
		w.Deadline = deadline.UTC().Format(time.RFC3339Nano)
	}
	if c.BudgetTokens > 0 {
		w.BudgetTokens = max(c.Remaining(), 1)
	}
	if c.BudgetCost > 0 {
		w.BudgetCost = max(c.RemainingCost(), 1e-6)
	}
	return map[string]any{ExtensionURI: w}
}

// Parse reads the extension from a message's metadata; nil when absent.
// A malformed value is a Validation error naming the key.
func Parse(meta map[string]any) (*Chain, error) {
	v, ok := meta[ExtensionURI]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errdefs.Validationf("metadata[%q]: not JSON", ExtensionURI)
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, errdefs.Validationf("metadata[%q]: want {chain, maxDepth, deadline, budgetTokens}: %v", ExtensionURI, err)
	}
	c := &Chain{Links: w.Chain, MaxDepth: w.MaxDepth, BudgetTokens: w.BudgetTokens, BudgetCost: w.BudgetCost}
	for i, l := range c.Links {
		if l.Agent == "" {
			return nil, errdefs.Validationf("metadata[%q].chain[%d].agent: required", ExtensionURI, i)
		}
	}
	if w.Deadline != "" {
		if c.Deadline, err = time.Parse(time.RFC3339Nano, w.Deadline); err != nil {
			return nil, errdefs.Validationf("metadata[%q].deadline: %q is not an RFC 3339 time", ExtensionURI, w.Deadline)
		}
	}
	if w.BudgetTokens < 0 {
		return nil, errdefs.Validationf("metadata[%q].budgetTokens: %d must not be negative", ExtensionURI, w.BudgetTokens)
	}
	if w.BudgetCost < 0 {
		return nil, errdefs.Validationf("metadata[%q].budgetCost: %g must not be negative", ExtensionURI, w.BudgetCost)
	}
	return c, nil
}

// UsageKey is the Task metadata key under which an agentd server reports
// the tokens a task's call tree used, so that its caller counts them in
// its own run: {"inputTokens", "outputTokens", "totalTokens"}.
const UsageKey = ExtensionURI + "#usage"

// Usage is the value under UsageKey.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	TotalTokens  int64 `json:"totalTokens"`
}

// ParseUsage reads UsageKey from a Task's metadata; ok is false when it
// is absent or malformed (a peer that does not report usage).
func ParseUsage(meta map[string]any) (Usage, bool) {
	v, found := meta[UsageKey]
	if !found {
		return Usage{}, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Usage{}, false
	}
	var u Usage
	if json.Unmarshal(b, &u) != nil || u.InputTokens < 0 || u.OutputTokens < 0 || u.TotalTokens < 0 {
		return Usage{}, false
	}
	return u, true
}

// ErrorClassKey is the Task metadata key under which an agentd server says
// the class of a failed task's error ("conflict" for a call cycle,
// "budget_exceeded" past a limit, …), so that its caller fails with the
// same class rather than a generic one.
const ErrorClassKey = ExtensionURI + "#errorClass"
