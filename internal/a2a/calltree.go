package a2a

import (
	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/calltree"
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
