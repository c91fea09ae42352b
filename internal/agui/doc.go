// Package agui serves agentd's runs to chat front ends in their two
// protocols: AG-UI 1.0 (CopilotKit, assistant-ui, every framework's UI
// adapter) and the Vercel AI SDK UI message stream (useChat, AI Elements).
// Both are faces over the same durable runs: every answer is translated
// from the run's event log and the thread's transcript, read through the
// runtime; the package keeps no state of its own, so any replica serves
// any stream, from its start or after a cut.
//
// Identity (AG-UI). threadId is the agentd context. A new AG-UI run whose
// input ends with a user message is a new agentd run whose id is the
// client's runId (runtime.SendRequest.RunID) — the same runId twice
// replays that run and never starts a second one; a runId that names a
// run of another thread or agent is a 409 naming "runId". A run that
// answers interrupts (resume entries) or frontend tool calls (trailing
// tool messages) is the next attempt of the parked agentd run: its answer
// message carries the runId (MetadataRunID), which is how the face finds
// it again; the runId is also recorded on the thread's record (runids.go),
// so that its reuse in another thread is refused. An AG-UI run spans the log from the run.start of its attempt
// to the run.end that ends or parks the run; recovery attempts on another
// replica (run.start resumed "crash") belong to it.
//
// Routes: POST /ag-ui/agents/{id} (RunAgentInput → SSE); POST
// /ag-ui/agents/{id}/connect (the connect pattern: the named run, else the
// thread's latest, replayed from its start and followed live); GET
// /ag-ui/agents/{id}/threads/{thread}/runs/{run}/events (the same stream
// after Last-Event-ID "<seq>.<k>": log seq, index of the AG-UI event that
// log event produced); POST /ai-sdk/agents/{id}/chat (useChat's body → UI
// message stream); GET /ai-sdk/agents/{id}/chat/{chatId}/stream (useChat's
// resume: the chat's active run from its current attempt; 204 when none).
//
// Mapping, agentd log event → AG-UI event → AI SDK part:
//
//	run.start (first of the run)   RUN_STARTED + MESSAGES_SNAPSHOT      start {messageId}
//	run.start (recovery, retry)    open items closed; CUSTOM            data-agentd-run-start
//	                               agentd.run.start; MESSAGES_SNAPSHOT
//	                               without the abandoned message
//	delta text                     TEXT_MESSAGE_START (first) +         text-start (first) + text-delta
//	                               TEXT_MESSAGE_CONTENT
//	reasoning                      REASONING_START + _MESSAGE_START     reasoning-start (first) +
//	                               (first), REASONING_MESSAGE_CONTENT;  reasoning-delta; reasoning-end
//	                               _MESSAGE_END + REASONING_END before  before the next other event
//	                               the next event of another type
//	step.complete/error of a       TEXT_MESSAGE_END + STEP_FINISHED     text-end + finish-step
//	model step
//	delta tool_call                TOOL_CALL_START/ARGS/END             tool-input-start + tool-input-available (dynamic)
//	delta tool_result              TOOL_CALL_RESULT                     tool-output-available | tool-output-error
//	step.start / step.complete     STEP_STARTED / STEP_FINISHED         start-step / finish-step (model steps);
//	/ step.error                   (name "<actor>:<kind>[#iter|:call]") data-step {step, status} (workflow steps)
//	plan                           STATE_SNAPSHOT {plan, steps}         data-plan
//	workflow step start/end        STATE_DELTA replace                  data-step (reconciled by id)
//	                               /steps/<id>/status
//	flow node step.start           STATE_SNAPSHOT / STATE_DELTA {flow}  —
//	input                          (kept for RUN_FINISHED)              (kept for the interrupt part)
//	run.end completed              RUN_FINISHED success                 finish stop
//	run.end input-required:        RUN_FINISHED interrupt, one          data-agentd-interrupt + finish other
//	  approvals                    Interrupt per call (tool_approval,
//	                               toolCallId, responseSchema)
//	  a question                   one Interrupt (input_required)
//	  frontend tool calls          RUN_FINISHED success +
//	                               pendingToolCallIds
//	run.end canceled               RUN_FINISHED cancelled               abort
//	run.end failed / rejected      RUN_ERROR {code: class, message}     error {errorText}
//	status                         —                                    —
//	governance, handoff, progress, CUSTOM "agentd.<type>" (the event's  data-agentd-<type> (the event's data)
//	artifact, signal, workflow,    data as value)
//	context.compaction, gap
//
// Tool call ids are "<agentd run id>.<model call id>": unique in a thread,
// where a model's call ids repeat from run to run. Message ids are
// "<run>-m<seq>" (text), "<run>-r<seq>" (tool results): the same log gives
// the same ids, on every replica and every replay.
//
// Frontend tools: RunAgentInput.tools ride on the user message's metadata
// (engine.MetadataClientTools); the loop engine offers them beside the
// agent's own and parks the run on a call to one (engine.ClientToolPromptPart).
//
// agui imports runtime, engine (the approval and client-tool vocabulary),
// model, store (the run vocabulary: Task, Event, Message), errdefs and
// logctx; never api, a2a, config or an engine implementation.
//
// Imports: engine, errdefs, logctx, model, run, runtime.
package agui
