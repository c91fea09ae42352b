package engine

import (
	"context"
	"time"

	"agentd/internal/errdefs"
)

// ValidateResume checks the host-side shape of run.ResumeFrom, the part
// of the resume contract every engine shares: nil is fine (a fresh start);
// otherwise the checkpoint must belong to this run (ExecID == run.ID) and
// carry a board. Both failures are Validation errors. Engines call it
// first thing in Execute when they support resume.
func ValidateResume(run Run) error {
	cp := run.ResumeFrom
	if cp == nil {
		return nil
	}
	if cp.ExecID != run.ID {
		return errdefs.Validationf("resume run %q: checkpoint belongs to run %q (a fork needs a new run id)", run.ID, cp.ExecID)
	}
	if cp.Board == nil {
		return errdefs.Validationf("resume run %q: checkpoint at step %q has no board", run.ID, cp.Step)
	}
	return nil
}

// ResumeUnsupported is the error an engine without resume support returns
// when it is handed a Run.ResumeFrom.
func ResumeUnsupported(run Run) error {
	return errdefs.NotAvailablef("resume run %q: engine does not support resume", run.ID)
}

// ResumeContext is per-attempt metadata saying why and how often a run is
// being executed, carried on the context. It complements Run.ResumeFrom,
// which says where to continue: keeping them apart lets hosts drive retry
// and recovery without touching checkpoint payloads.
type ResumeContext struct {
	// Attempt counts executions of the run, from 1 for the first.
	Attempt int `json:"attempt"`
	// StartedAt is when the run's first attempt started; it stays constant
	// across resumes, and engines copy it to Checkpoint.OriginalStartedAt.
	StartedAt time.Time `json:"started_at"`
	// Signal names what triggered this attempt. Known values are the
	// Signal* constants; others are opaque and must be tolerated.
	Signal string `json:"signal,omitempty"`
	// CheckpointAt is when the checkpoint being resumed was produced; zero
	// on a fresh start.
	CheckpointAt time.Time `json:"checkpoint_at,omitzero"`
	// Step is the resumed checkpoint's Step; empty on a fresh start.
	Step string `json:"step,omitempty"`
}

// Resumed reports whether this attempt continues from a checkpoint.
func (rc ResumeContext) Resumed() bool { return !rc.CheckpointAt.IsZero() || rc.Step != "" }

// The resume signals agentd's runtime uses.
const (
	SignalManual            = "manual"             // an operator or API call asked for it
	SignalInput             = "input"              // the user answered an input-required prompt
	SignalInterruptRecovery = "interrupt-recovery" // re-executed after a cooperative stop
	SignalCrash             = "crash"              // a replica took over an expired lease
	SignalRetry             = "retry"              // automatic retry of a classified failure
	SignalSchedule          = "schedule"           // a scheduler or queue replayed it
	SignalCancel            = "cancel"             // a parked run resumed to handle its cancel (Capabilities.HandlesParkedInterrupts)
	SignalTimeout           = "timeout"            // a parked run resumed because its prompt expired (Capabilities.PromptDeadlines)
)

// PromptDeadlineKey names the member of a prompt's data part that says
// until when the prompt may be answered (RFC 3339); see
// Capabilities.PromptDeadlines.
const PromptDeadlineKey = "deadline"

type resumeCtxKey struct{}

// WithResumeContext returns ctx carrying rc.
func WithResumeContext(ctx context.Context, rc ResumeContext) context.Context {
	return context.WithValue(ctx, resumeCtxKey{}, rc)
}

// ResumeContextFromContext returns the ResumeContext on ctx; ok is false
// when the host attached none, which engines treat as a first attempt.
func ResumeContextFromContext(ctx context.Context) (ResumeContext, bool) {
	rc, ok := ctx.Value(resumeCtxKey{}).(ResumeContext)
	return rc, ok
}

// CheckSpecVersion refuses a checkpoint written by another version of an
// engine's configuration (running; empty on either side accepts it): a
// Conflict that says what changed. Waiting would not help — the
// configuration the run started under is gone — so the run ends, and the
// client is told to start a new one. kind names the engine in the error.
func CheckSpecVersion(kind string, cp Checkpoint, running string) error {
	if cp.SpecVersion != "" && running != "" && cp.SpecVersion != running {
		return errdefs.Conflictf("%s checkpoint of run %q at step %q: the agent's configuration changed from version %q to %q since the run stopped; "+
			"a run cannot resume under another configuration: start a new run", kind, cp.ExecID, cp.Step, cp.SpecVersion, running)
	}
	return nil
}
