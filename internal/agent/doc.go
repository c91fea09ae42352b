// Package agent is agentd's application layer: what a user of an agent
// sees. It owns the agent's identity (Agent, AgentCard, Skill), the
// envelopes of one turn (Request, Result, Status, RunInfo) and the function
// that drives one turn through an engine:
//
//	res, err := agent.Run(ctx, ag, eng, req, opts...)
//
// How a turn executes is not this package's business: Run hands a board to
// an engine.Engine and classifies what comes back. Everything that looks
// like policy lives on four extension points instead — a BoardSeeder builds
// the initial board (history, retrieval, system prompt), Observers react to
// the lifecycle (transcript append, metrics), Deciders decide at the
// boundary (commit or discard, revise, hand off), and the caller's
// engine.Host carries every host capability the engine reaches for
// (events, interrupts, user prompts, checkpoints, usage). Run never wraps
// or decorates the host it is given.
//
// Hand-offs between agents are ordinary tools (HandoffTool) whose calls a
// Decider (HandoffDecider) finds in the messages of the turn and reports in
// Result.State; dispatching the next agent is the host's job.
//
// Imports: engine, errdefs, model, tool. agent must not import event,
// runtime, store, api, a2a, llm or any concrete engine: it knows nothing of
// HTTP, storage or how a turn is executed.
//
// Invariants Run keeps:
//   - (res, nil) for every business outcome (completed, interrupted,
//     canceled, aborted, failed); (nil, err) only for infrastructure
//     failures — a nil engine, an empty Agent.ID, a seeder error — and
//     (res, err) when a Decider fails, with res fully populated;
//   - per attempt: seeder, then OnRunStart, then Execute, then OnInterrupt
//     (only for an engine.InterruptedError), then the Decider chain; one
//     OnRunEnd per Run, last, after every OnRunStart;
//   - Observers never change the outcome: their panics are recovered;
//   - Deciders return decisions and never mutate the Result: Run alone
//     applies the merged decision (Committed, State);
//   - Result.Messages holds only what this turn produced (see Result);
//   - Run starts no goroutine and is safe to call concurrently; Agent
//     values, options, Observers and Deciders may be shared across
//     concurrent runs, so Observer and Decider implementations must be
//     safe for concurrent use (agenttest checks it).
package agent
