package engine

import "context"

// Run is the per-execution input bundle the host assembles once and hands
// to Execute. It is plain data; engines read it and never mutate it (the
// Attributes map and the ResumeFrom checkpoint included).
type Run struct {
	// ID identifies this execution. The host mints it and keeps it stable
	// across resumes: a resumed attempt carries the same ID.
	ID string
	// ParentRunID names the run that dispatched this one (multi-agent call
	// chains); empty for a top-level run. It is a typed field so loop and
	// depth detection need not trust every engine to copy an attribute.
	ParentRunID string
	// Attributes is host metadata that flows into event headers and
	// telemetry (tenant, agent id under AttrAgentID, …).
	Attributes map[string]string
	// Deps holds the run's dependencies (model provider, tool registry, …);
	// nil when the engine needs none. Read it with GetDep.
	Deps *Dependencies
	// ResumeFrom, when set, asks the engine to continue from a checkpoint
	// it produced earlier instead of starting afresh. The engine alone
	// interprets Step and Payload. The contract:
	//   - the engine prefers ResumeFrom.Board over the board argument;
	//   - ResumeFrom.ExecID != ID is a Validation error (forking a run
	//     needs a new ID, not a resume) — see ValidateResume;
	//   - an engine that cannot resume returns a NotAvailable error and
	//     never silently starts from scratch.
	ResumeFrom *Checkpoint
}

// Engine is the one-method contract every engine satisfies so the agent
// layer can drive any of them the same way.
//
// Execute runs until completion, interrupt or ctx cancellation:
//   - success: the final board (often the input pointer) and nil;
//   - interrupt received on host.Interrupts(): the partial board and
//     Interrupted(intr);
//   - ctx done: the partial board and ctx.Err(), possibly wrapped;
//   - any other failure: the partial board and a classified error.
//
// It publishes what it does as typed events (events.go) through host; the
// host frames the attempt with its own start and end. It must not close any
// host-owned channel, nor mutate run.Attributes or *run.ResumeFrom.
type Engine interface {
	Execute(ctx context.Context, run Run, host Host, board *Board) (*Board, error)
}

// EngineFunc adapts a function to Engine, for test doubles and small
// engines. Wrap it with WithCapabilities to declare capabilities.
type EngineFunc func(ctx context.Context, run Run, host Host, board *Board) (*Board, error)

// Execute calls f.
func (f EngineFunc) Execute(ctx context.Context, run Run, host Host, board *Board) (*Board, error) {
	return f(ctx, run, host, board)
}
