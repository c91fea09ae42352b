package a2a

import (
	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/calltree"
	"agentd/internal/model"
	"agentd/internal/run"
)

// callTreeDecl declares the call-tree extension (package calltree): a
// message may carry its call chain, depth limit, deadline and token budget,
// and agentd refuses a call that would pass them.
func callTreeDecl() a2a.AgentExtension {
	return a2a.AgentExtension{
		URI: calltree.ExtensionURI,
		Description: "Call-tree limits: a message's metadata[\"" + calltree.ExtensionURI + "\"] = {chain: [{agent, server}], " +
			"maxDepth, deadline (RFC 3339), budgetTokens} says which agents called this one and what the request may still spend; " +
			"the task fails (a cycle: conflict; depth or budget: budget_exceeded; deadline: timeout) rather than pass them, " +
			"and the calls this agent makes carry the chain on.",
		Params: map[string]any{"metadataKey": calltree.ExtensionURI, "defaultMaxDepth": calltree.DefaultMaxDepth},
	}
}

// callTreeMeta is a task's metadata with what the call-tree extension
// reports of it: its usage under calltree.UsageKey, for the caller that
// counts a peer's tokens in its own run, and a failed task's error class
// under calltree.ErrorClassKey. The task's own map is left as it is.
func callTreeMeta(t run.Task) map[string]any {
	if t.Usage.IsZero() && t.Error == nil {
		return t.Metadata
	}
	out := make(map[string]any, len(t.Metadata)+2)
	for k, v := range t.Metadata {
		out[k] = v
	}
	if u := t.Usage; !u.IsZero() {
		total := u.Add(model.TokenUsage{}).TotalTokens
		out[calltree.UsageKey] = calltree.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: total}
	}
	if t.Error != nil && t.Error.Class != "" {
		out[calltree.ErrorClassKey] = t.Error.Class
	}
	return out
}
