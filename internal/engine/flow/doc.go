// Package flow is the node/transition flow engine: it runs flows written
// in Trellis's documented node syntax — text, input and action nodes,
// ordered conditional transitions, save_to, on_error / on_denied /
// on_signal routes and SAGA compensation (undo) — as durable, resumable
// agentd runs.
//
// A flow is a directory of node files (Markdown with YAML front matter,
// the body being the content, or YAML/JSON; the node id is the file's
// path without extension) or one YAML file with name, description,
// context and a list of nodes; the entry node is "start" (Load). Compile
// checks it — unknown targets, unreachable nodes, nodes that can never
// reach an end, do and wait in one node, bad CEL, bad templates, unknown
// tools — and compiles every template (text/template with default,
// coalesce, toJson) and every condition (CEL, parsed once, cost-limited,
// evaluated over the context with input bound to the last answer or
// action result). New builds the engine over a compiled flow and a tool
// registry.
//
// Behaviour follows the keys a node sets: do makes an action (its content
// is said first, then the tool runs), wait, input_type or options an
// input (its content is the question, asked through Host.AskUser with a
// data part naming the constraints), anything else a text node (its
// content is streamed and appended to the main channel as the agent's
// message). After a node the route is: an option's own target, on_denied
// for a confirm answered no, the first transition whose condition holds,
// then to; no route ends the flow, "rollback" unwinds it.
//
// Events: step.start and step.complete (or step.error) of kind "node" per
// node executed, with detail {node, behaviour, visit, to, signal}, under
// the step actor "<agent>.node.<id>"; per tool call a step of kind "tool"
// (or "undo" for a compensation) with detail {node, tool,
// idempotency_key}, a tool_call and a tool_result delta; a token delta per
// text said; when the flow ends, its context as the artifact
// "flow-context" (metadata: history, last node); run.start and run.end
// exactly once per Execute.
//
// Imports: engine, errdefs, model, strictjson, tool. flow must not import
// agent, runtime, store, api, config or any other engine.
//
// Invariants:
//   - the flow state (node, visit counts, context, sys, history, completed
//     actions with an undo, pending tool call, rollback progress) is the
//     payload of a checkpoint "node:<id>" written when the run enters a
//     node — before it executes — and again before a tool call, before a
//     question is first asked and after each compensation; a resume
//     executes the node it was in with the same visit count. A checkpoint
//     the host fails to write fails the run;
//   - a tool call carries the idempotency key "<run>:<node>:<visit>"
//     (IdempotencyKey), ":undo" added for its compensation, so a call
//     replayed after a crash is recognisable by the tool;
//   - an action that fails with no on_error (or on_error: rollback) rolls
//     the flow back: the undo of every completed action runs, newest
//     first, each to its end even under a cancel; a failing compensation
//     is reported as a step.error and in the run's error, and never stops
//     the others; the run then fails with the action's error and every
//     compensation failure. An explicit "to: rollback" whose compensations
//     all succeed completes;
//   - an answer the input refuses (confirm accepts y/yes/true/1 and
//     n/no/false/0, normalised to yes/no; choice an option, its number or
//     any spelling of it; int a whole number) or that no route takes is
//     asked again with the reason; an answer after the node's timeout, or
//     no answer within it, raises the timeout signal;
//   - signals: a cancel raises interrupt, a drain shutdown; the node's
//     on_signal (on_interrupt, on_timeout) or the entry node's
//     on_signal_default handles it and the run continues at the handler,
//     which may say goodbye and end (after a cancel, a node that would
//     wait for input on that path ends the run with the interrupt
//     instead; after a drain it parks as usual). An answer re-arms the
//     handlers; a second signal before one is unhandled. An unhandled
//     interrupt or shutdown ends Execute with engine.Interrupted (a drain
//     then resumes from the last checkpoint, elsewhere); an unhandled
//     timeout fails the run with a Timeout error. The flow declares
//     HandlesParkedInterrupts and PromptDeadlines: a host that parks runs
//     resumes a parked flow that is canceled with the interrupt pending
//     (the handler runs as above), and one whose question's deadline (in
//     the prompt's data part) passed with AskUser answering a Timeout,
//     which raises the timeout signal like the flow's own clock does;
//   - a missing required_context key or a context_schema mismatch fails
//     the run with an error naming the node and the key;
//   - a cancelled ctx ends Execute with ctx.Err(); every goroutine Execute
//     starts has returned before it does.
package flow
