package engine

import (
	"agentd/internal/errdefs"
)

// Cause says why a host asks a run to stop. It is metadata for the host
// (discard or commit partial output), never a directive: an engine's only
// correct answer to any cause is to stop cleanly and return.
type Cause string

// The causes agentd's runtime sends.
const (
	// CauseUnknown is the zero value; hosts should not send it.
	CauseUnknown Cause = ""
	// CauseUserCancel is a user-requested cancel; output is discarded.
	CauseUserCancel Cause = "user_cancel"
	// CauseUserInput is a barge-in: fresh user input supersedes the turn.
	CauseUserInput Cause = "user_input"
	// CauseHostShutdown is a graceful shutdown (drain); output produced so
	// far is kept and the run resumes elsewhere from its checkpoint.
	CauseHostShutdown Cause = "host_shutdown"
	// CauseCustom is a host-defined cause described by Interrupt.Detail.
	CauseCustom Cause = "custom"
)

// Interrupt is what a host sends on Interrupts() to ask the engine to stop,
// and what the resulting error carries back. It is a plain value.
type Interrupt struct {
	Cause  Cause  `json:"cause"`
	Detail string `json:"detail,omitempty"`
}

// InterruptedError is the error an engine returns after honouring an
// Interrupt. It belongs to errdefs.ClassInterrupted, so errdefs.IsInterrupted
// holds for it and anything wrapping it; hosts recover the cause with
// errors.As into an InterruptedError value.
type InterruptedError struct {
	Interrupt
}

// Interrupted converts a received Interrupt into the error Execute returns:
//
//	case intr := <-host.Interrupts():
//		return board, engine.Interrupted(intr)
//
// A zero Interrupt still gives a well-formed error.
func Interrupted(intr Interrupt) error { return InterruptedError{Interrupt: intr} }

// Error describes the interrupt, e.g. "interrupted: user_cancel: stop".
func (e InterruptedError) Error() string {
	msg := "interrupted"
	if e.Cause != CauseUnknown {
		msg += ": " + string(e.Cause)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// ErrorClass places the error in errdefs.ClassInterrupted.
func (e InterruptedError) ErrorClass() errdefs.Class { return errdefs.ClassInterrupted }
