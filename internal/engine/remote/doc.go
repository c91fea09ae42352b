// Package remote is the engine of agents that run elsewhere: a peer that
// serves an A2A agent card (another agentd, an a2a-go, ADK or LangGraph
// agent, anything A2A). Each attempt resolves the peer's card (cached,
// revalidated with its ETag), builds a2a-go's client on the best interface
// the card offers (v1.0 before v0.3; JSON-RPC or HTTP+JSON), and streams
// the peer task into the run:
//
//   - text-only artifact chunks are the peer's answer: token deltas through
//     the host (engine.Token); other artifacts become the run's
//     artifacts, chunking kept;
//   - the peer's input-required (auth-required) becomes the run's:
//     host.AskUser parks the run, and the user's answer is sent to the peer
//     task (its taskId and contextId) by the resumed attempt;
//   - completed ends the run with the answer (the streamed text, else the
//     final status message's); failed, rejected and canceled end it with the
//     peer's reason; an Interrupt with cause user_cancel is forwarded as
//     CancelTask, other interrupts (a drain) leave the peer task running for
//     the next attempt to re-attach to; a run canceled while parked on the
//     peer's question is resumed by the host for its cancel
//     (HandlesParkedInterrupts) and cancels the peer task.
//
// Tool (tool.go, toolhost.go) is a peer called as a tool of a loop agent
// (tool kind a2a_peer): each call is one run of this engine, a child run of
// the caller's when the host is an engine.ChildRunner, keyed by the call's
// idempotency key; the peer's answer tokens, artifacts and states become
// progress of the caller's run (engine.ToolProgress), the peer's
// question is the caller's (Host.AskUser parks it, and the resumed caller
// runs the call again, which continues the same peer task; a caller
// canceled while parked calls CancelParked, which resumes the call's child
// for the cancel, and the peer task is canceled), and the tool's result is
// the peer's final answer, its artifacts as data.
//
// Files: config.go (Config), engine.go (Execute, connecting), attempt.go
// (one attempt's stream and its mapping), reattach.go (resuming a peer
// task), checkpoint.go (the payload, forward), saver.go (writing
// checkpoints off the stream's path), card.go (the card cache),
// transport.go (the HTTP client), breaker.go, errors.go, convert.go (parts),
// interrupt.go, tool.go and toolhost.go (the peer as a tool).
//
// Invariants:
//
//   - The peer task id is checkpointed as soon as the peer names it, and a
//     question before it is asked (both written before going on). Every
//     other update that changed the run (a token, an artifact) is
//     published with the checkpoint of the state it leads to (forward):
//     through engine.CheckpointedPublisher when the host offers it, as
//     agentd's runtime does, the checkpoint is written in the same store
//     transaction as the update's event — one checkpoint per write of the
//     log, not per token; other hosts get the event, and the checkpoint
//     queued for the saver (saver.go). A checkpoint holds the text
//     forwarded so far and, for peers that declare agentd's
//     resumable-stream extension, the last seq. A resumed attempt (crash,
//     drain) therefore re-attaches with SubscribeToTask instead of
//     starting a second task.
//
//   - Re-attaching to an agentd peer asks for the updates after the
//     checkpointed seq (Last-Event-ID). With agentd's runtime as host each
//     peer update is in the run's log exactly once, whenever the replica
//     dies: the log holds an update's event if and only if the newest
//     checkpoint covers it. (With a host without the capability, the
//     updates that became durable after the last checkpoint write are
//     forwarded again.) When the peer task has
//     moved on by the time of the re-attachment (its snapshot is no longer
//     working), the replayed updates are forwarded first, questions the
//     task has since left behind are skipped, and the task's state is
//     acted on last.
//
//   - A peer tool's call is a child run: the peer's answer is in the
//     child's log exactly once as above; the progress events the caller's
//     log receives are a second copy, written by the caller's log on its
//     own, so after a kill they may repeat or miss the updates of the
//     child's last write.
//
//   - Peers without cursors: the Task snapshot that opens SubscribeToTask
//     (or GetTask when the task has ended) is compared with the checkpointed
//     text, and only the answer text beyond it is forwarded, as one delta.
//     Guaranteed: the final answer text is complete and no text is doubled,
//     as long as the peer's Task carries its artifacts; not guaranteed: the
//     token boundaries, and non-text artifacts and status messages the peer
//     sent while no one was attached are not replayed.
//
//   - Every call goes through one HTTP client whose dialer refuses private,
//     loopback and link-local addresses unless Config.AllowPrivate
//     (internal/netguard), whose response bodies are capped, and through a
//     circuit breaker that fails fast after consecutive failures to reach
//     the peer.
//
//   - Errors: the peer unreachable is NotAvailable (marked public, since
//     it names the peer, not agentd's store), the breaker open likewise; a
//     request the peer refused or a rejected task is Validation with the
//     peer's message; a failed peer task is Internal with the peer's text,
//     marked public.
//
//   - The attempt owns two goroutines, the interrupt watcher and the
//     saver, and waits for both before Execute returns.
//
//   - Trace context crosses the hop: each request to the peer has an
//     OpenTelemetry client span and carries the run's traceparent (otelhttp
//     on the peer client's transport, with OpenTelemetry's globals, which
//     are no-ops unless the server turned tracing on).
//
// Imports: calltree, engine, errdefs, model, netguard, tool. Never runtime,
// store or
// agentd's HTTP packages.
package remote
