package engine

import (
	"context"
	"fmt"
	"time"

	"agentd/internal/errdefs"
)

// Resumer is the optional interface through which an engine vets a
// checkpoint before a host spends an execution on it. CanResume is cheap
// (no I/O) and answers nil, or a classified error: Validation when the
// checkpoint is malformed for this engine, NotAvailable when it is
// understood but cannot be resumed (spec drift, removed step).
type Resumer interface {
	CanResume(cp Checkpoint) error
}

// AsResumer returns eng's Resumer, walking wrappers via Unwrap.
func AsResumer(eng Engine) (Resumer, bool) { return findEngine[Resumer](eng) }

// IsResumable reports whether eng, or an engine it wraps, implements
// Resumer.
func IsResumable(eng Engine) bool {
	_, ok := AsResumer(eng)
	return ok
}

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

// LoadAndResumeOption tunes LoadAndResume.
type LoadAndResumeOption func(*loadAndResumeOpts)

type loadAndResumeOpts struct {
	signal     string
	attempt    int
	startedAt  time.Time
	freshStart bool
}

// WithResumeSignal sets ResumeContext.Signal (default SignalManual).
func WithResumeSignal(s string) LoadAndResumeOption {
	return func(o *loadAndResumeOpts) { o.signal = s }
}

// WithResumeAttempt sets ResumeContext.Attempt. By default it is 1 on a
// fresh start and 2 when a checkpoint is resumed; supervisors that retry
// repeatedly pass their own count.
func WithResumeAttempt(n int) LoadAndResumeOption {
	return func(o *loadAndResumeOpts) { o.attempt = n }
}

// WithResumeStartedAt sets ResumeContext.StartedAt. By default it is the
// checkpoint's OriginalStartedAt (else its Timestamp) when resuming, and
// the current time on a fresh start.
func WithResumeStartedAt(t time.Time) LoadAndResumeOption {
	return func(o *loadAndResumeOpts) { o.startedAt = t }
}

// WithFreshStartAllowed says what to do when the store holds no checkpoint
// for the run: execute afresh (true, the default) or fail with a NotFound
// error (false, for resume-only commands).
func WithFreshStartAllowed(allowed bool) LoadAndResumeOption {
	return func(o *loadAndResumeOpts) { o.freshStart = allowed }
}

// LoadAndResume continues run from its newest checkpoint in store, or
// starts it afresh. It loads the checkpoint, checks it belongs to run
// (Validation otherwise), that eng declares SupportsResume (NotAvailable
// otherwise) and that eng's Resumer, if any, accepts it; then it sets
// run.ResumeFrom, attaches a ResumeContext to ctx and calls Execute. A nil
// store holds no checkpoints, a nil host is NoopHost and a nil board a new
// one. It is one attempt, not a retry loop: supervisors compose their own
// policy around it.
func LoadAndResume(ctx context.Context, eng Engine, host Host, store CheckpointStore,
	run Run, board *Board, opts ...LoadAndResumeOption) (*Board, error) {
	if eng == nil {
		return board, errdefs.Validationf("load and resume run %q: nil engine", run.ID)
	}
	o := loadAndResumeOpts{signal: SignalManual, freshStart: true}
	for _, opt := range opts {
		opt(&o)
	}
	if host == nil {
		host = NoopHost{}
	}
	if board == nil {
		board = NewBoard()
	}

	cp, err := loadCheckpoint(ctx, store, run.ID)
	if err != nil {
		return board, err
	}
	rc := ResumeContext{Attempt: o.attempt, StartedAt: o.startedAt, Signal: o.signal}
	if cp == nil {
		if !o.freshStart {
			return board, errdefs.NotFoundf("resume run %q: no checkpoint to resume from", run.ID)
		}
		rc = rc.withDefaults(1, time.Now().UTC())
		return eng.Execute(WithResumeContext(ctx, rc), run, host, board)
	}

	run.ResumeFrom = cp
	if err := checkResumable(eng, run); err != nil {
		return board, err
	}
	started := cp.OriginalStartedAt
	if started.IsZero() {
		started = cp.Timestamp
	}
	rc = rc.withDefaults(2, started)
	rc.CheckpointAt, rc.Step = cp.Timestamp, cp.Step
	return eng.Execute(WithResumeContext(ctx, rc), run, host, board)
}

func (rc ResumeContext) withDefaults(attempt int, startedAt time.Time) ResumeContext {
	if rc.Attempt <= 0 {
		rc.Attempt = attempt
	}
	if rc.StartedAt.IsZero() {
		rc.StartedAt = startedAt
	}
	return rc
}

func loadCheckpoint(ctx context.Context, store CheckpointStore, runID string) (*Checkpoint, error) {
	if store == nil {
		return nil, nil
	}
	cp, err := store.Load(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("resume run %q: load checkpoint: %w", runID, err)
	}
	return cp, nil
}

// checkResumable runs the host-side checks of LoadAndResume, cheapest
// first, so an unusable checkpoint fails before any execution starts.
func checkResumable(eng Engine, run Run) error {
	if err := ValidateResume(run); err != nil {
		return err
	}
	if !CapabilitiesOf(eng).SupportsResume {
		return ResumeUnsupported(run)
	}
	if r, ok := AsResumer(eng); ok {
		if err := r.CanResume(*run.ResumeFrom); err != nil {
			return fmt.Errorf("resume run %q from step %q: %w", run.ID, run.ResumeFrom.Step, err)
		}
	}
	return nil
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
