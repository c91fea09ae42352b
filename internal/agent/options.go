package agent

import (
	"maps"

	"agentd/internal/engine"
)

// RunOption configures one Run call. Options are plain values and may be
// reused across calls.
type RunOption func(*runConfig)

// runConfig is the resolved option set of one Run call.
type runConfig struct {
	seeder      BoardSeeder
	host        engine.Host
	deps        *engine.Dependencies
	attributes  map[string]string
	maxAttempts int
	resumeFrom  *engine.Checkpoint
}

// WithBoardSeed installs the seeder that builds each fresh attempt's
// board; nil keeps DefaultSeeder.
func WithBoardSeed(s BoardSeeder) RunOption {
	return func(c *runConfig) {
		if s != nil {
			c.seeder = s
		}
	}
}

// WithEngineHost passes h to the engine as is — Run never wraps it. It is
// how the engine gets event publishing, interrupts, user prompts,
// checkpoints and usage accounting; without it (or with nil) the engine
// gets engine.NoopHost, fine for tests and batch runs only.
func WithEngineHost(h engine.Host) RunOption {
	return func(c *runConfig) { c.host = h }
}

// WithDependencies sets engine.Run.Deps, where engines find their model
// provider, tool registry and other collaborators.
func WithDependencies(d *engine.Dependencies) RunOption {
	return func(c *runConfig) { c.deps = d }
}

// WithAttributes adds entries to engine.Run.Attributes. They win over the
// identifiers Run writes under the Attr* keys, and later calls win over
// earlier ones; nothing else in the map is interpreted by agent.
func WithAttributes(extra map[string]string) RunOption {
	return func(c *runConfig) {
		if len(extra) == 0 {
			return
		}
		if c.attributes == nil {
			c.attributes = make(map[string]string, len(extra))
		}
		maps.Copy(c.attributes, extra)
	}
}

// WithMaxRevise caps the engine.Execute calls of one Run at n and so
// enables the revise loop: while a completed attempt's merged decision
// asks to Revise and fewer than n attempts were made, Run fires
// OnRunRevise, seeds a fresh board from the original Request and executes
// again under the same run id. Attempts that did not complete never
// revise: their Result is final. n <= 1 (the default) disables the loop,
// so a Revise is only recorded through its Reason.
func WithMaxRevise(n int) RunOption {
	return func(c *runConfig) { c.maxAttempts = n }
}

// WithResumeFrom continues a run from cp instead of starting afresh: the
// first attempt executes with engine.Run.ResumeFrom = cp, under run id
// cp.ExecID, on a board restored from cp.Board (the seeder is not called:
// the checkpoint is the starting state). Revise attempts start afresh.
// A Request.RunID other than cp.ExecID, or a checkpoint without a board,
// is a Validation error; an engine that cannot resume fails the turn with
// NotAvailable. nil means a fresh start; the last call wins.
func WithResumeFrom(cp *engine.Checkpoint) RunOption {
	return func(c *runConfig) { c.resumeFrom = cp }
}
