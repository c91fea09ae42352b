// Package mcpserver is the MCP face: every hosted agent is an MCP tool,
// served over MCP's streamable HTTP transport with the official go-sdk
// (github.com/modelcontextprotocol/go-sdk), at /mcp (every agent) and
// /mcp/agents/{id} (one). A tool call is an ordinary agentd run, started
// through the runtime as a REST send is: durable, visible on every face,
// with its trajectory.
//
// Two protocol eras are served side by side. A client of the sessionless
// revision 2026-07-28 (SEP-2575; it says so in every request's
// Mcp-Protocol-Version header) goes to the SDK's stateless handler, so
// any replica answers any of its requests; an older client (2025-11-25 and
// before: initialize, Mcp-Session-Id) goes to the stateful handler, whose
// sessions carry server-to-client requests (elicitation) and
// notifications/cancelled. The sessions are the SDK's, in this process:
// behind several replicas a legacy client needs session affinity.
//
// Mapping (agentd → MCP):
//
//	agent (id, card, skills)      tool: name = id (MCP's allowed characters
//	                              A-Za-z0-9_-. kept, any other → '_', at most
//	                              128), title = card name, description =
//	                              card description + one line per skill with
//	                              its examples
//	—                             inputSchema {message: string, data?: object,
//	                              context_id?: string, run_id?: string},
//	                              additionalProperties false
//	response_schema (loop)        outputSchema; the answer's data part is the
//	                              result's structuredContent (and its JSON
//	                              text is the content)
//	send (runtime.Send)           tools/call: message → a text part, data →
//	                              a data part, context_id → the conversation,
//	                              run_id → answer that input-required run
//	run completed                 result: the last assistant message's parts
//	                              as text content
//	run failed / rejected         result with isError, the run's error
//	run canceled                  result with isError
//	run id, context id, state     result _meta agentd/run_id,
//	                              agentd/context_id, agentd/status
//	event log (delta, step.*,     notifications/progress when the call has a
//	progress, status)             progressToken: progress = the event's seq,
//	                              message = the token text or "calling tool
//	                              X", "step Y started", "run working" …;
//	                              _meta agentd/run_id (the first one, "run …
//	                              started", comes before any event)
//	input-required                elicitation (form) when the client declared
//	                              it: {answer: string} for a prompt,
//	                              {approve: boolean, reason?: string} for an
//	                              approval prompt (one decision for all its
//	                              pending calls); legacy clients get
//	                              elicitation/create, 2026-07-28 clients an
//	                              input-required result (SEP-2322) whose
//	                              requestState is the run id. Accept → the
//	                              run's input; decline → approvals rejected,
//	                              any other prompt: the run is canceled.
//	                              Without elicitation: a result (not an
//	                              error) naming the run id and how to answer
//	                              (run_id argument, REST, A2A)
//	cancel (runtime.Cancel)       notifications/cancelled (legacy sessions),
//	                              the request's HTTP stream closed
//	                              (2026-07-28); not while the server drains,
//	                              whose runs recovery resumes
//	a run that outlasts          a task (the tasks extension,
//	Options.TaskAfter (5 s) or   io.modelcontextprotocol/tasks, SEP-2663)
//	waits for input, for a       when the call's capabilities declare it:
//	2026-07-28 client that       the call answers a handle (resultType
//	declares tasks               "task", taskId = the run id, ttlMs null:
//	                             kept as long as retention keeps the run);
//	                             tasks/get = the run's state (working,
//	                             input_required with the prompt as
//	                             inputRequests, completed with the tool
//	                             result inlined — a failed run is a result
//	                             with isError —, cancelled); tasks/update
//	                             = the prompt's answer; tasks/cancel =
//	                             cancel. The SDK has no tasks: the methods
//	                             go through mcp.AddReceivingCustomMethod,
//	                             the handle through a middleware (tasks.go).
//	                             The 2025-11-25 experimental tasks (a task
//	                             parameter, tasks/result, tasks/list) are
//	                             not served
//
// Authentication is agentd's edge (auth.Middleware: API keys, JWT,
// tenants) — the MCP authorization spec's bearer token is an agentd key
// or token. The face hands the caller to the SDK as its TokenInfo (which
// binds a legacy session to its user), and every request's handler runs in
// the caller's tenant; tools/list needs agents:read, tasks/get runs:read,
// tools/call, tasks/update and tasks/cancel runs:write. Limits, traces and metrics wrap /mcp like every route.
//
// mcpserver imports runtime, store (the run vocabulary), model, engine
// (approval shapes, response schemas), auth and errdefs; nothing imports
// it but cmd/server. It keeps no state of its own.
//
// Imports: auth, engine, errdefs, model, run, runtime.
package mcpserver
