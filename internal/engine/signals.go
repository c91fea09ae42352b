package engine

import "agentd/internal/model"

// Signals are a user steering a run while it executes: a pause, which an
// engine honours at a safe boundary right after a checkpoint — everything
// before it on the board, nothing after it started — by asking the host
// (PauseRequested) and returning the interrupt it gets; and feedback, user
// messages an engine takes at its own safe boundary (the loop: before
// each model turn) through the host's optional FeedbackSource. Engines
// that do the former say so (PauseAware); a host refuses to pause others.

// CausePause is the cause of the interrupt PauseRequested returns: output
// so far is kept, and the run waits, paused, to be resumed from the
// checkpoint it just wrote.
const CausePause Cause = "pause"

// Pauser is the optional Host capability that tells an engine, at a safe
// boundary, whether the user paused the run. PauseNow answers true at
// most once per pause, and only when a checkpoint was written after the
// pause was asked for, so that the run resumes from where it stopped.
type Pauser interface {
	PauseNow() (Interrupt, bool)
}

// PauseRequested returns Interrupted with cause CausePause when h is a
// Pauser whose run is to pause now, else nil. Engines call it right after
// a checkpoint, before starting the next step, and return its error.
func PauseRequested(h Host) error {
	if p, ok := h.(Pauser); ok {
		if intr, ok := p.PauseNow(); ok {
			return Interrupted(intr)
		}
	}
	return nil
}

// PauseAware marks an engine that calls PauseRequested at its safe
// boundaries.
type PauseAware interface {
	PausesAtCheckpoints()
}

// Pausable reports whether eng is PauseAware.
func Pausable(eng Engine) bool {
	_, ok := eng.(PauseAware)
	return ok
}

// SignalResume is the ResumeContext.Signal of an attempt that continues a
// run the user paused.
const SignalResume = "resume"

// FeedbackSource is the optional Host capability that hands an engine the
// messages the user sent to its run while it executed. TakeFeedback
// returns them once, oldest first (role user, ids set when the host
// stores them already), and nil when there are none; the engine appends
// them to its conversation before its next model turn.
type FeedbackSource interface {
	TakeFeedback() []model.Message
}

// TakeFeedback returns the pending feedback of h when h is a
// FeedbackSource, else nil.
func TakeFeedback(h Host) []model.Message {
	if f, ok := h.(FeedbackSource); ok {
		return f.TakeFeedback()
	}
	return nil
}
