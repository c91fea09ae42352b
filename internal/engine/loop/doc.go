// Package loop is the LLM tool loop engine: it streams a model turn,
// runs the tools the model asked for, feeds their results back and repeats
// until the model answers (a turn without tool calls) or MaxIterations
// turns have been spent, which fails the run with a BudgetExceeded error.
//
// One iteration is one model turn plus the tool calls it requested. The
// conversation is the board's engine.MainChannel (seeded by the host; its
// last message is usually the user's), with Config.SystemPrompt prepended
// to every request and never stored on the board. Every assistant message
// (text and tool-call parts) and every tool result (one role-tool message
// per call) is appended to MainChannel as it happens, each with a fresh
// message id; earlier messages are never rewritten, except the pieces of
// an answer cut at the length limit, which are joined into one once the
// model finished it (finish.go).
//
// Each request says what shape the answer takes (choice.go): the response
// schema as the provider's response format (or quoted in the system
// prompt, Config.SchemaInPrompt) and the tool choice, the request's (the
// user message's metadata "tool_choice") or the agent's. A turn's finish
// reason decides what its answer is worth (finish.go): "length" is
// continued or compacted and asked again, "content_filter" fails the run
// with class content_filter.
//
// Events, all under the step actor Config.AgentID (falling back to the
// run's agent_id attribute): a stream token per text delta as it arrives;
// a tool_call delta per call once the turn has assembled it; a tool_result
// delta per result; step.start/complete/error of kind "model" for each
// turn and of kind "tool" for each call, whose Detail carries the
// iteration (and tool name and call id), so consumers tell iterations and
// parallel calls apart without a per-iteration actor.
//
// Requests are built from context regions (context.go): the system prompt,
// the latest compaction summary, and the recent history after it. When a
// request would pass Config.CompactThreshold of Config.ContextWindow
// tokens, old tool results are elided and then the oldest exchanges are
// summarised by the model into a summary message appended to MainChannel
// (role system, metadata "compaction"), with a context.compaction event
// (compact.go); the board is still only ever appended to.
//
// Tools run through tool.Registry.ExecuteAll, parallel-safe ones
// concurrently, under a context that carries the Host (engine.WithHost)
// and is cancelled by an interrupt. The tools of the last allowed
// iteration still run and are checkpointed before the run fails on
// MaxIterations: an iteration ends when all its results are in.
//
// Imports: engine, errdefs, llm, model, tool. loop must not import agent,
// runtime, store, api or any other engine.
//
// Invariants:
//   - a tool call on the board is always followed by its result: calls
//     that are never run (interrupt, budget spent) get a synthesised error
//     result, so the transcript stays valid for the next request;
//   - a checkpoint "iter:<n>" is written after iteration n's messages are
//     all on the board (also when an interrupt or a spent budget ends the
//     run there); a resume continues with iteration n+1 and never repeats
//     a tool call the checkpoint already answers, and a resume from the
//     checkpoint of the final answer completes at once. A checkpoint the
//     host fails to write fails the run: carrying on would let a crash
//     replay tool calls that already ran;
//   - each tool call carries the idempotency key
//     "<run id>:<iteration>:<call id>" (IdempotencyKey), stable across
//     replays; a call whose tool has effects carries its effect key
//     instead, and with a host that keeps an engine.EffectLedger its
//     intent is durable (with a checkpoint of the turn) before it runs and
//     its result before the next call or the iteration's checkpoint; a
//     resumed turn reuses recorded results and resolves calls in doubt by
//     their policy, never running them again blindly (effects.go,
//     doubt.go);
//   - tool failures are results the model reads, never run failures;
//     provider errors fail the run with their class kept;
//   - an interrupt received at any point (mid-stream, during tools)
//     ends Execute with engine.Interrupted, after appending the partial
//     assistant text (metadata "partial": true) or the results of the
//     calls under way; only a final answer that was already complete
//     stands. A cancelled ctx ends it with ctx.Err() the same way;
//   - a spent budget (Host.ReportUsage answering BudgetExceeded after a
//     turn) and an exhausted MaxIterations fail the run with a
//     BudgetExceeded error;
//   - a request never separates a tool call from its result, always starts
//     with the system prompt, and is cut (summarised) only between
//     exchanges, oldest first, never the latest one;
//   - a run parked by a tool's call (parked.go) and canceled there runs
//     nothing when it resumes for the cancel: each pending call of a
//     tool.ParkedCanceler cancels what it left waiting, and Execute ends
//     with the cancel (HandlesParkedInterrupts, declared only when one of
//     the agent's tools is such a tool);
//   - a client's tools (clienttools.go: offered with the latest user
//     message, engine.MetadataClientTools) are offered and vetted like the
//     agent's own, never run here: a turn that calls them asks the host
//     once for all their results and parks until the answer brings them;
//   - every goroutine Execute starts has returned before Execute does.
package loop
