// Package agentproto is agentd's Agent Protocol face: the LangGraph API
// that @langchain/langgraph-sdk (and Agent Chat UI, useStream, assistant-
// ui's and CopilotKit's LangGraph adapters) speak, served under Prefix
// (/lg) over the same runtime, store and event logs as REST and A2A. It
// translates; it keeps no state of its own (what it records — thread
// records, a run's metadata — it records through the runtime).
//
// # Mapping
//
//	Agent Protocol        agentd
//	assistant             an agent's default assistant: graph_id = agent id, assistant_id = a UUIDv5
//	                      of it, one version, read-only (writes are 409); or a stored assistant
//	                      (runtime.CreateAssistant …): versions, context = the agent's overrides,
//	                      checked by the runtime; a run on it records it (runtime.MetaAssistant)
//	thread                a context (conversation), with a thread record (store.Threads) for its
//	                      metadata; status from its newest run: busy, interrupted (input-required,
//	                      auth-required), error (failed), else idle
//	run                   a run (task): same id; status pending, running, interrupted (waiting for
//	                      input, or canceled), success, error, timeout
//	command.resume        the next message to the interrupted run (its next attempt, same run id):
//	                      a string answers a question; approvals take {"approvals": […]}, the
//	                      Agent Inbox's answers ({"type": "accept" | "ignore" | "edit" | "response"})
//	                      or {"decision": "approve" | "reject"}
//	interrupt             an input-required prompt: the question (and its data parts, such as a
//	                      flow's input type); tool calls waiting for approval, one HumanInterrupt
//	                      each ({action_request, config, description})
//	checkpoint            a checkpoint of one of the thread's runs, id "<run id>.<n>"
//	                      (runtime.CheckpointRef); a run's first checkpoint descends from the one
//	                      it was forked from, else from the previous run's last; a copied
//	                      thread's history starts with its source's, re-rooted on the copy
//	                      (checkpoint_lineage.go)
//	state values          messages (LangChain message dicts, from the transcript as the run saw it,
//	                      or the board of a forked branch), steps (a workflow's step results), context
//	                      (a flow's saved answers), the board's variables
//	checkpoint_id on run  a fork (runtime.MetaForkFrom): a tool loop starts from the checkpoint's
//	                      conversation; a workflow or flow resumes from a copy of the checkpoint
//	                      (re-running the steps after it); the later history stays readable;
//	                      later runs follow the new branch
//	multitask_strategy    the runtime's per-send policy: reject (409), enqueue, interrupt
//	cron                  a schedule of the agent (runtime.CreateSchedule, crons.go); each tick an
//	                      ordinary run with metadata.schedule_id, into the cron's thread or a new
//	                      conversation
//	webhook               a POST of the run (with its values or error) once it stopped, through
//	                      netguard's SSRF rule with push.timeout and retries for push.retry_for
//	                      (webhook.go); at least once while the replica that took the run lives
//	store item            a long-term memory item (internal/memory, through Options.Memory): namespace,
//	                      key, value, created_at, updated_at, score; put answers 204, a missing
//	                      item is null on get and no error on delete; ttl in minutes, refreshed on
//	                      reads that ask; a query ranks by embeddings when configured, else by text
//
// # Streams
//
// A stream opens with a metadata event (no id), then translates the run's
// event log one event at a time (translate.go); frame ids are
// "<seq>-<index>", so a join stream with Last-Event-ID replays the log and
// skips what the client had — every frame once, from any replica. The
// modes a stream was created with are kept in the run's metadata
// (agentd.stream_mode) so that a join without stream_mode (the SDK's
// reconnect) translates alike.
//
//	log event              frames (mode: event data)
//	run.start              values: the conversation so far; events: on_chain_start
//	delta text             messages-tuple: messages [AIMessageChunk, metadata]; messages:
//	                       messages/metadata (once) then messages/partial; events:
//	                       on_chat_model_stream
//	delta tool_call        the same, the chunk carrying tool_call_chunks and tool_calls
//	delta tool_result      values; updates {tools: {messages: [ToolMessage]}}; messages-tuple;
//	                       messages/complete; events: on_tool_end
//	step.start             tasks and debug (task); events: on_chat_model_start | on_tool_start |
//	                       on_chain_start
//	step.complete/error    a model step: values, updates {node: {messages: [AIMessage]}},
//	                       messages/complete, on_chat_model_end; other steps: updates {node: detail},
//	                       on_chain_end; all: tasks and debug (task_result)
//	artifact               updates {step: {steps: {step: output}}} (a workflow step's output)
//	input                  updates {__interrupt__: […]}; values with __interrupt__
//	plan, progress, …      custom: the log event's data
//	run.end                failed/rejected: error {error, message}; terminal: checkpoints and debug
//	                       (checkpoint) per checkpoint of the run, then values (the final state),
//	                       on_chain_end
//
// Tokens are the hot path (token.go): a text delta's actor and text are
// read without decoding the event (runtime.TokenLiterals); its
// messages-tuple frame is written piece by piece — the chunk encoded up to
// its content once per message, the token's literal as the log holds it,
// the metadata encoded once per step — and the token joins its message
// still encoded, decoded once per message (BenchmarkTranslateToken,
// TestTokenFastPathMatchesDecode, FuzzTokenLiterals). A chunk carries
// type, id and content (and a tool call's tool_calls and
// tool_call_chunks): LangChain fills in the empty members it leaves out.
//
// The node of a frame is the last segment of the event's actor; the other
// segments are subgraph namespaces ("research_node_plan/planner": node
// planner in namespace research_node_plan:<run id>). With stream_subgraphs
// their frames are named "mode|namespace" (messages-tuple's too:
// "messages|namespace"); without, only the messages modes and events carry
// them (with langgraph_checkpoint_ns in the metadata). A hand-off's target
// acts in namespace "<target>:<child run id>" (translate_handoff.go).
//
// # Not served (a clear 4xx)
//
// Updating a cron (405: delete and create); writing a thread's state (422: the
// engines change state only by running); supersteps and ttl on threads,
// interrupt_before/after, command.goto/update, after_seconds on wait and
// stream (422); deleting a pending or running run (409). Rollback
// (multitask and cancel action) and DELETE delete runs through
// runtime.RollbackRun / DeleteRun; after_seconds is runtime.SendAfter;
// config.configurable.tool_choice / context.tool_choice set the request's
// tool choice (config.go); webhooks are run push configs that the A2A push
// delivery carries (webhook.go).
//
// agentproto imports runtime, store (the run vocabulary: Task, Thread,
// Message queries), engine, model and errdefs; never api, a2a or a store
// implementation.
//
// Imports: engine, errdefs, logctx, memory, model, run, runtime.
package agentproto
