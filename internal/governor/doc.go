// Package governor is the HTTP client of an external tool-call governor:
// a policy service that receives each tool call a loop agent proposes
// (loop.Proposal, POSTed as JSON) and answers a verdict
// ({"verdict": "allow" | "deny" | "ask", "reason": "…"}). It implements
// loop.Governor; the loop bounds each review with the agent's governor
// timeout and, in enforce mode, treats any error as a deny.
//
// The governor's address passes agentd's private-address rule
// (internal/netguard): loopback, private and link-local addresses are
// refused unless the configuration allows them explicitly, as for
// federation peers. Answers are capped in size and redirects refused.
//
// Imports: engine/loop, errdefs, netguard. governor must not import runtime,
// api or config.
package governor
