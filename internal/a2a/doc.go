// Package a2a is agentd's Agent2Agent front end: it serves every hosted
// agent's card and its JSON-RPC and HTTP+JSON bindings, v1.0 and v0.3,
// through a2a-go's transports over its own a2asrv.RequestHandler, which
// works on the runtime alone — tasks, transcripts and event logs are read
// through the runtime's read methods, never from the store (a2a-go's
// default handler, task store and queues are not used).
//
// # Routes
//
//	GET  /.well-known/agent-card.json               default agent's card
//	GET  /agents/{id}/.well-known/agent-card.json   each agent's card
//	POST /agents/{id}/jsonrpc                       JSON-RPC; A2A-Version missing or 0.3 ⇒ v0.3,
//	                                                1.0 ⇒ v1.0, anything else ⇒ -32009
//	     /agents/{id}/rest/…                        HTTP+JSON v1.0; the v0.3 routes under /rest/v1/…
//
// Cards are the combined v1.0 + v0.3 shape (a2a-go's compatibility
// producer), with absolute URLs from Options.PublicURL or the request
// (Host, X-Forwarded-Proto, X-Forwarded-Host), an ETag and Cache-Control.
// Unknown agents are 404; bodies over Options.MaxBodyBytes are 413, before
// anything is decoded.
//
// An agent's card also lists its published assistants as skills, and a
// request's metadata assistant_id runs a message on one (assistants.go).
//
// # Mapping
//
// A task is a runtime run: same id, context = contextId. SendMessage starts
// a task, or continues one in input-required (message.taskId); it waits for
// a terminal or interrupted state unless configuration.returnImmediately. A
// terminal task refuses messages (-32004), an unknown or foreign task is
// -32001, a contextId that does not match the task's is -32602. A final
// answer the agent marks with model.MetaResponseKind = "message" is
// returned as a Message. Task snapshots carry the stored status (its
// message is the question of input-required, the reason of a failure or
// cancel), the task's transcript messages as history (historyLength: unset
// = DefaultHistoryLength, 0 = none; ListTasks defaults to 0) and the
// artifacts, assembled from the run's log as a client that streamed it
// holds them (artifacts.go): one artifact per answer. The Task that opens a
// stream carries them as they stood where the stream's updates start; a
// resume with a cursor carries only those the engine recorded (the client
// holds the rest).
//
// Streams send the Task first, then translate the run's event log one event
// at a time (translate.go), never re-reading or re-encoding the task:
//
//	status (not submitted)   TaskStatusUpdateEvent, state TASK_STATE_*, status message as agent Message
//	delta text               TaskArtifactUpdateEvent on one artifact per assistant answer
//	                         (id <task>-answer-<seq of its first delta>): the first chunk a
//	                         stream sends of it without append — also when the stream joined
//	                         mid-answer —, later ones append:true
//	step.complete/step.error an empty chunk with lastChunk:true closes the open answer — but
//	                         not a step.error of class aborted or interrupted (a step stopped
//	                         with its attempt): the attempt's run.end decides
//	run.end                  closes an open answer the same way; the stream ends at a run.end
//	                         that leaves the task terminal or interrupted (v0.3 clients get
//	                         final:true on that status from the compatibility layer). The
//	                         run.end of an attempt cut short (state working: its replica died,
//	                         drained or lost its lease) leaves the answer open, and the first
//	                         text chunk of the attempt that resumes the run replaces it
//	                         (same id, append:false) — or, when that run.start says
//	                         "continues" (the engine goes on where it stopped), appends
//	delta tool_call/result   TaskStatusUpdateEvent WORKING whose message holds a data part
//	                         {"toolCall": …} / {"toolResult": …}
//	artifact                 TaskArtifactUpdateEvent as published (append, lastChunk)
//	gap                      TaskStatusUpdateEvent WORKING with metadata MetaGap; when retention
//	                         pruned the run's end and nothing follows, the task's state, and
//	                         the stream ends there
//	run.start, step.start,   nothing
//	input
//
// A streaming send retried with a messageId already submitted (a duplicate)
// starts nothing: it is answered like a subscription without a cursor — the
// Task as it is now, then live updates; for a terminal or interrupted task
// the Task alone — never the submission's old updates.
//
// An error found before a stream's first update is, on JSON-RPC, the
// stream's one SSE event carrying the JSON-RPC error (where the official
// clients look), and on HTTP+JSON the HTTP status with the error body:
// a2a-go's transports commit to SSE before the handler runs, so the
// response is held back until its first event (deferredWriter). Each SSE
// event's id is the seq of the run event it came from (the SDK's random
// ids are rewritten), so an EventSource reconnect's Last-Event-ID resumes
// it. Streams lift the write deadline, get keep-alive comments from the
// transport every Options.KeepAlive, and are flushed once per group of
// updates in hand (at most flushGroup), not once per update (flush.go).
//
// Request bodies must be JSON in a JSON media type (application/json or
// application/a2a+json), UTF-8, nested at most 64 levels (body.go), or are
// refused before any decoder sees them; decode errors of the SDK are
// rewritten in the request's terms, never naming Go types. The v1.0
// HTTP+JSON routes answer application/a2a+json to clients that accept it. Every agentd error is
// mapped to an A2A error in one place, toA2AError; errdefs.ClassNotAvailable
// (a draining replica, a store outage) is the retryable server error
// (JSON-RPC -32000, HTTP+JSON 503 UNAVAILABLE with Retry-After), never a
// client error, and its message never carries the store's details. A part
// whose media type the agent's card does not list is
// ContentTypeNotSupportedError.
//
// # Resumable streams (extension ExtensionURI)
//
// Declared on every card. Every status and artifact update carries the seq
// of the run event it came from in metadata[MetaSeq]. SubscribeToTask with a
// cursor n — metadata.afterSeq (JSON-RPC params, v0.3 tasks/resubscribe,
// HTTP+JSON POST body), the afterSeq query parameter, or the Last-Event-ID
// header (the only channel v1.0 SDK clients have, as SubscribeToTaskRequest
// has no metadata) — sends the Task, then exactly the updates of events
// after n, then live ones; it works for a task that has ended meanwhile.
// Events pruned by retention are announced by a status update with
// metadata[MetaGap] = {"prunedThrough": p}. The translator is primed with
// the state at n — the answer open there —, read from the log back to the
// last answer boundary only (prime.go), so resumed updates are identical to
// those an unbroken stream would have carried and a resume costs the same
// however long the log.
//
// # Push notifications (push_config.go, push_deliver.go)
//
// The four config methods store a task's webhooks in Options.PushStore
// (tenant-scoped); SendMessage takes one inline too. A URL must be http(s)
// and, unless PushOptions.AllowPrivate, name or resolve to public
// addresses only; delivery re-checks the dialled address (netguard), so a
// DNS answer that changed since cannot reach the internal network, and
// follows no redirect. An unknown config is -32001, like an unknown task.
//
// Delivery (Server.DeliverPushes) is internal/push's, run on every
// replica: it claims pending configs in the store (a claim per config that
// expires unless renewed, fenced by generation) and follows each task's
// log from the config's durable cursor; this package renders each update
// (push_deliver.go's renderer) with the stream translator, primed there as
// for a resumed stream, so a webhook gets exactly the updates a stream
// from its creation carries, as a StreamResponse (application/a2a+json),
// with the token in A2A-Notification-Token and X-A2A-Notification-Token
// and authentication as Authorization: <scheme> <credentials>. A config
// set through a v0.3 binding gets what v0.3 servers send instead: the
// Task (v0.3 shape, application/json) at every status update, with its
// artifacts as they stand at that update. Updates go
// out one at a time, in order, each retried with exponential backoff and
// jitter (5xx, 408, 429, timeouts, refused connections) for
// PushOptions.RetryFor, then given up and logged; the cursor is saved
// after each, so a killed replica's deliveries resume on another replica
// once its claims expire, repeating at most the update in flight. Once an
// update was given up after its retries, the webhook's circuit opens: the
// next updates get one attempt each until one is taken. Each attempt is
// an otelhttp client span in the run's trace (traceparent out). A
// config's delivery ends (done) when its task is terminal and delivered;
// while its task waits for input, every update delivered, it parks (saved
// at the task's version, no goroutine or claim) until the task moves.
//
// Another face may store a run webhook (push_run.go): a config marked
// "run" (the Agent Protocol's webhook, stored by internal/agentproto). It
// rides the same claims, cursor, retries and hand-over, but gets one POST,
// the body PushOptions.RunBody builds from the task, at the first status
// update after which the run has stopped (ended or waiting for input), and
// is then done.
//
// # Authentication (guard.go, security.go)
//
// The server's edge (auth.Middleware) authenticates a call and puts the
// caller and its tenant in the context; guard wraps each agent's handler
// and refuses a method the caller's scopes do not cover (ErrUnauthorized:
// JSON-RPC -31403, HTTP+JSON 403) before the handler sees it. With
// Options.Security set, the cards declare the schemes — each entry in the
// v1.0 and the v0.3 shape at once, as the combined card needs — and
// GetExtendedAgentCard serves the card to authenticated callers.
//
// Imports: auth, calltree, engine, errdefs, logctx, model, netguard, push,
// run, runtime. It must not import api, config or any engine implementation,
// and it holds no business state: push delivery, which outlives requests,
// is internal/push's.
package a2a
