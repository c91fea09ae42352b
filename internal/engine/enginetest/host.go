package enginetest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// RecordingHost is an engine.Host that records what an engine does with
// it — events, checkpoints, prompts, usage — and lets a test fire
// interrupts. It is safe for concurrent use. Set the optional fields
// before the engine runs.
type RecordingHost struct {
	// AskUserFn answers prompts; nil answers NotAvailable like NoopHost.
	AskUserFn func(ctx context.Context, prompt engine.UserPrompt) (engine.UserReply, error)
	// UsageFn, when set, sees the running usage total after each report
	// and may refuse it (e.g. errdefs.BudgetExceeded).
	UsageFn func(total model.TokenUsage) error

	interrupts chan engine.Interrupt

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every publish
	events      []engine.Event
	checkpoints []engine.Checkpoint
	staged      []string // steps of the checkpoints staged
	cpErrs      []error
	prompts     []engine.UserPrompt
	usage       model.TokenUsage
}

var (
	_ engine.Host             = (*RecordingHost)(nil)
	_ engine.CheckpointStager = (*RecordingHost)(nil)
)

// NewRecordingHost returns an empty recording host.
func NewRecordingHost() *RecordingHost {
	return &RecordingHost{
		interrupts: make(chan engine.Interrupt, 16),
		changed:    make(chan struct{}),
	}
}

// Publish records ev.
func (h *RecordingHost) Publish(_ context.Context, ev engine.Event) error {
	h.mu.Lock()
	h.events = append(h.events, ev)
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	return nil
}

// Interrupts returns the channel Fire sends on.
func (h *RecordingHost) Interrupts() <-chan engine.Interrupt { return h.interrupts }

// Fire sends intr to the engine. The channel is buffered, so Fire does not
// wait for the engine to receive it.
func (h *RecordingHost) Fire(intr engine.Interrupt) { h.interrupts <- intr }

// AskUser records prompt and answers through AskUserFn.
func (h *RecordingHost) AskUser(ctx context.Context, prompt engine.UserPrompt) (engine.UserReply, error) {
	h.mu.Lock()
	h.prompts = append(h.prompts, prompt)
	h.mu.Unlock()
	if h.AskUserFn != nil {
		return h.AskUserFn(ctx, prompt)
	}
	return engine.NoopHost{}.AskUser(ctx, prompt)
}

// Checkpoint records cp after a JSON round trip, as a real store would
// persist it: an engine that resumes from a recorded checkpoint sees
// decoded JSON (float64 numbers, map[string]any objects), not the Go
// values it stored. A checkpoint that cannot be encoded is a Validation
// error, recorded for CheckpointErrors.
func (h *RecordingHost) Checkpoint(_ context.Context, cp engine.Checkpoint) error {
	stored, err := roundTrip(cp)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		err = errdefs.Validationf("checkpoint of run %q at step %q does not encode: %w", cp.ExecID, cp.Step, err)
		h.cpErrs = append(h.cpErrs, err)
		return err
	}
	h.checkpoints = append(h.checkpoints, stored)
	return nil
}

// StageCheckpoint (engine.CheckpointStager) records cp as Checkpoint does
// — a test host has no later write to carry it — and notes its step as
// staged (Staged).
func (h *RecordingHost) StageCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	if err := h.Checkpoint(ctx, cp); err != nil {
		return err
	}
	h.mu.Lock()
	h.staged = append(h.staged, cp.Step)
	h.mu.Unlock()
	return nil
}

// Staged returns the steps of the checkpoints staged, in order.
func (h *RecordingHost) Staged() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.staged)
}

func roundTrip(cp engine.Checkpoint) (engine.Checkpoint, error) {
	b, err := json.Marshal(cp)
	if err != nil {
		return engine.Checkpoint{}, err
	}
	var out engine.Checkpoint
	err = json.Unmarshal(b, &out)
	return out, err
}

// ReportUsage adds usage to the total and consults UsageFn.
func (h *RecordingHost) ReportUsage(_ context.Context, _ string, usage model.TokenUsage) error {
	h.mu.Lock()
	h.usage = h.usage.Add(usage)
	total := h.usage
	h.mu.Unlock()
	if h.UsageFn != nil {
		return h.UsageFn(total)
	}
	return nil
}

// Events returns the published events, in order.
func (h *RecordingHost) Events() []engine.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// Described returns Describe of each published event, in order.
func (h *RecordingHost) Described() []string {
	evs := h.Events()
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = Describe(ev)
	}
	return out
}

// Checkpoints returns the recorded checkpoints (as decoded from JSON),
// oldest first.
func (h *RecordingHost) Checkpoints() []engine.Checkpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.checkpoints)
}

// CheckpointErrors returns the errors of checkpoints that failed to
// encode.
func (h *RecordingHost) CheckpointErrors() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.cpErrs)
}

// Prompts returns the prompts the engine asked, in order.
func (h *RecordingHost) Prompts() []engine.UserPrompt {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.prompts)
}

// Usage returns the total usage reported.
func (h *RecordingHost) Usage() model.TokenUsage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.usage
}

// WaitFor blocks until an event matching match has been published (it
// may already have been) and returns the first such event, or ctx's
// error.
func (h *RecordingHost) WaitFor(ctx context.Context, match func(engine.Event) bool) (engine.Event, error) {
	seen := 0
	for {
		h.mu.Lock()
		for ; seen < len(h.events); seen++ {
			if ev := h.events[seen]; match(ev) {
				h.mu.Unlock()
				return ev, nil
			}
		}
		changed := h.changed
		h.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// WaitForStep waits for the start of the step of actor (WaitFor).
func (h *RecordingHost) WaitForStep(ctx context.Context, actor string) (engine.Event, error) {
	return h.WaitFor(ctx, func(ev engine.Event) bool {
		s, ok := ev.(engine.StepStarted)
		return ok && s.Actor == actor
	})
}
