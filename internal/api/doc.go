// Package api is agentd's REST + Server-Sent Events face: agents, runs,
// run event streams and transcripts, assistants (assistants.go: stored,
// versioned configurations of agents), as described by openapi.yaml; and the
// long-term memory (/v1/memory, memory.go) over the memory service, which
// cmd/server injects (Options.Memory).
//
// Handlers translate HTTP to runtime calls and back; they hold no business
// state. Errors are RFC 9457 problem details whose status comes from the
// error's class (errdefs.HTTPStatus). Bodies are size-limited and decoded
// strictly. SSE streams carry `id: <seq>`, `event: <type>` and the event's
// JSON as `data:`; they honour Last-Event-ID and ?after=, send keep-alive
// comments while the run is silent, clear the write deadline, and close
// after run.end.
//
// Imports: agent, engine, errdefs, logctx, memory, model, run, runtime,
// strictjson.
// Never an engine implementation, llm or a2a.
package api
