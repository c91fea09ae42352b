// Package enginetest is the contract suite every engine.Engine runs, and a
// recording Host for engine tests.
//
// An engine's test calls RunSuite with a factory that builds the engine
// and the inputs that drive it down each exit path (see Case). The suite
// then checks, on every path: every event one a host accepts, every step
// that starts ends (completed or failed), none ends that never started,
// nothing published after Execute returns; interrupts
// honoured with the sent Cause; cancellation and deadlines honoured; a
// foreign ResumeFrom.ExecID rejected as Validation; a resume refused with
// NotAvailable by engines that cannot resume, and completed from the
// engine's own checkpoint by engines that can; Run.Attributes and
// ResumeFrom never mutated; declared Capabilities honest.
//
// The suite proves it can fail: its own tests run it against deliberately
// broken engines and assert each breakage is reported.
//
// Imports: engine, errdefs, model. Only test code imports it.
package enginetest
