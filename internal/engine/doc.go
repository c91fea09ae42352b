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
// Checkpointer, UsageReporter) with HostFuncs, HostMiddleware, ComposeHost
// and NoopHost; the optional CheckpointedPublisher (an event and the
// checkpoint covering it, durable together) with WithCheckpoint;
// Interrupt, Cause and InterruptedError; Checkpoint,
// CheckpointStore, Resumer, ResumeContext and LoadAndResume; Capabilities
// and Describer; Shape and Shaper (an engine drawn as a graph, shape.go);
// Dependencies; the event subject schema (subjects.go) and
// the lifecycle and stream-delta publishing helpers every engine shares,
// and ActorEvents, their form for one actor of a run. The contract
// suite every engine runs lives in enginetest.
//
// Imports: event (Envelope, Subject), model, errdefs, runlog/jsonfast (the
// token payload, written by hand: see encodeToken) and the standard
// library. engine must not
// import agent, runtime, store, llm, tool or any concrete engine: it knows
// nothing of agents, HTTP or storage technology.
//
// Invariants an engine keeps (enginetest checks them):
//   - run.start is its first and run.end its last event, each exactly once,
//     on every exit path (success, failure, interrupt, cancel, deadline);
//     PublishRunStart and PublishRunEnd write them in one shared shape.
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
