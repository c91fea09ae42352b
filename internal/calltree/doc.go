// Package calltree bounds the tree of runs one request starts: workflow
// steps, hand-offs, agents run as workflow steps, peer tools and remote
// agents each open a child of the run that calls them, and without a bound
// two agents that call each other would start runs until memory ran out.
//
// A Chain travels in the context of every run: the agents from the root
// down to the current one (each a Link naming the agent and the server
// that runs it), the tree's depth limit, its deadline and its remaining
// token budget. Entering an agent (Enter) fails when the agent is already
// on the chain — the error names the cycle — or when the chain is as long
// as the limit; opening a child (Spawn) fails when the run has opened its
// fan-out limit of children. Across servers the chain rides in the A2A
// message metadata under ExtensionURI (Metadata, Parse); an agentd server
// that receives it enters its own agent onto it, so the limits hold over
// a federation as they hold in one process.
//
// Mapping (A2A): message.metadata["https://agentd.dev/a2a/ext/call-tree/v1"]
// = {"chain": [{"agent", "server"}…], "maxDepth": n, "deadline": RFC 3339,
// "budgetTokens": n}; see docs/federation.md.
//
// calltree imports only internal/errdefs and the standard library; the
// runtime, the configuration's workflow agents and the remote engine use it.
//
// Imports: errdefs.
package calltree
