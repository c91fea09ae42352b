package engine

// Capabilities is what an engine declares it can do, read by hosts before
// Execute: to refuse a resume the engine cannot honour, to attach a
// checkpoint store only when it is used, to refuse an engine that prompts
// users in a headless deployment. The zero value claims nothing, the safe
// default. Every claim must be backed by behaviour; enginetest checks.
type Capabilities struct {
	// SupportsResume: Execute honours Run.ResumeFrom. When false the
	// engine answers any ResumeFrom with an errdefs.NotAvailable error.
	SupportsResume bool `json:"supports_resume,omitempty"`
	// EmitsUserPrompt: Execute may call Host.AskUser.
	EmitsUserPrompt bool `json:"emits_user_prompt,omitempty"`
	// EmitsCheckpoint: Execute writes checkpoints through the host (on a
	// successful run, at least one).
	EmitsCheckpoint bool `json:"emits_checkpoint,omitempty"`
	// HandlesParkedInterrupts: the engine's answer to an interrupt may
	// involve work of its own even while the run is parked for input (a
	// flow's on_signal handler saying goodbye). A host that parks runs
	// then resumes a parked run that is canceled from its latest
	// checkpoint, in a new attempt (ResumeContext.Signal SignalCancel)
	// with the interrupt (cause user_cancel) already pending on
	// Host.Interrupts, instead of ending it without the engine; an
	// attempt that then completes is recorded as canceled, its last
	// message the reason.
	HandlesParkedInterrupts bool `json:"handles_parked_interrupts,omitempty"`
	// PromptDeadlines: a prompt of the engine may expire — it carries a
	// data part, a JSON object whose PromptDeadlineKey member is an RFC
	// 3339 time. A host that parks runs resumes a run whose prompt
	// expired unanswered (ResumeContext.Signal SignalTimeout), and its
	// AskUser then answers that prompt with an errdefs.Timeout error.
	PromptDeadlines bool `json:"prompt_deadlines,omitempty"`
	// ResumeContinuesOutput: an attempt that resumes a run cut short goes
	// on from where the cut attempt's output stopped (a peer re-attached)
	// instead of producing it again from the checkpoint (a model turn
	// streamed anew). Readers that assemble answers (A2A) append to the
	// open answer rather than replace it.
	ResumeContinuesOutput bool `json:"resume_continues_output,omitempty"`
}

// Describer is the optional interface through which an engine declares
// its Capabilities. It stays separate from Engine so that a one-method
// type remains a complete engine.
type Describer interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns the capabilities eng declares (Describer), or
// the zero value.
func CapabilitiesOf(eng Engine) Capabilities {
	if d, ok := eng.(Describer); ok {
		return d.Capabilities()
	}
	return Capabilities{}
}

// CheckpointSuggester is the optional interface through which a host asks
// an engine to write a checkpoint at its next safe boundary — before a
// drain, a scale-down or a lease hand-over. It is advisory: it returns at
// once without waiting for the checkpoint, and the host usually follows it
// with an Interrupt after a grace period.
type CheckpointSuggester interface {
	SuggestCheckpoint() error
}

// SuggestCheckpoint asks eng for a voluntary checkpoint when it
// implements CheckpointSuggester; otherwise it does nothing and returns
// nil.
func SuggestCheckpoint(eng Engine) error {
	if s, ok := eng.(CheckpointSuggester); ok {
		return s.SuggestCheckpoint()
	}
	return nil
}
