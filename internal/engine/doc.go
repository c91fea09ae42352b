// Package engine is the contract between agentd's runtime and the engines
// that do the work of a run (the LLM tool loop, DAG workflows, flows, remote
// A2A peers). An engine receives three things:
//
//	Execute(ctx, run Run, host Host, board *Board) (*Board, error)
//
// run is read-only metadata (ID, Attributes, Deps, ResumeFrom); host is what
// the engine may ask of its runtime (publish events, watch for interrupts,
// ask the user, checkpoint, report token usage); board is the shared
// blackboard of variables and typed message channels the engine mutates.
//
// What lives here: Board and its snapshots; Run, Engine, EngineFunc; Host
// and its five single-method parts (Publisher, Interrupter, UserPrompter,
// Checkpointer, UsageReporter) and NoopHost; the optional
// CheckpointedPublisher (an event and the checkpoint covering it, durable
// together) with WithCheckpoint; Interrupt, Cause and InterruptedError;
// Checkpoint and ResumeContext; Capabilities and Describer; Shape and
// Shaper (an engine drawn as a graph, shape.go); DirectAnswerer (an engine
// that answers some messages with a message of its own, direct.go);
// Dependencies; Event, the closed set of typed events an
// engine publishes (events.go: token, reasoning, tool call and result, step started,
// completed and failed, artifact, progress, plan, verdict, compaction;
// effect, with the EffectLedger capability and effect keys: effects.go)
// and the actor names they carry (actor.go). The contract suite every
// engine runs lives in enginetest.
//
// Imports: errdefs, model. engine must not import agent, runtime, store,
// llm, tool or any concrete engine: it knows nothing of agents, HTTP or
// storage technology.
//
// Invariants an engine keeps (enginetest checks them):
//   - every event it publishes is valid (Validate), and no step completes
//     or fails that never started; the host, not the engine, frames each
//     attempt with a start and an end;
//   - a received Interrupt ends Execute with Interrupted(intr), which
//     satisfies errdefs.IsInterrupted and carries the Cause;
//   - a cancelled ctx ends Execute with ctx.Err() (possibly wrapped);
//   - Run.ResumeFrom with a foreign ExecID is a Validation error; an engine
//     that cannot resume answers any ResumeFrom with NotAvailable instead
//     of silently starting afresh; a resuming engine prefers
//     ResumeFrom.Board over the board argument;
//   - Run.Attributes and *Run.ResumeFrom are never mutated, and no
//     host-owned channel is closed by the engine;
//   - declared Capabilities are honest.
//
// Concurrency: Board and Dependencies are safe for concurrent
// use; Host implementations must be too, since engines call them from any
// goroutine. Board values are treated as immutable once stored: replace a
// value with SetVar rather than mutating it in place, and use Snapshot for
// an independent deep copy.
package engine
