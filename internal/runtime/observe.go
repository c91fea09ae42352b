package runtime

import (
	"context"
	"encoding/json"
	"maps"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
)

// Observer watches this replica's runs for telemetry (traces, metrics). It
// is optional: without one (Options.Observer nil) a run pays nothing for
// it. Implementations must be safe for concurrent use and must not block:
// they are called on the run's own path.
type Observer interface {
	// RunCreated is called in the context of the request that creates a
	// run, before the run is stored. The metadata it returns (nil: none)
	// is stored with the task, so that every attempt — on this replica or,
	// after a failover, on another — can find the request's trace.
	RunCreated(ctx context.Context, run RunInfo) map[string]any
	// AttemptStarted is called as an attempt begins executing here. The
	// context it returns (carrying, say, the attempt's span) is the one
	// the engine runs in; the AttemptObserver sees the attempt's steps
	// and its end.
	AttemptStarted(ctx context.Context, a AttemptInfo) (context.Context, AttemptObserver)
}

// RunInfo names a run being created.
type RunInfo struct {
	RunID, ContextID, AgentID string
}

// AttemptInfo describes an attempt as it starts.
type AttemptInfo struct {
	RunInfo
	Attempt int
	// Resume is why the attempt resumes the run ("" for a fresh run,
	// "input", "crash", …).
	Resume string
	// Metadata is the task's metadata, with what RunCreated added.
	Metadata map[string]any
	// Created is when the run was created.
	Created time.Time
}

// AttemptObserver sees one attempt. Its methods are called from the
// engine's goroutines, Ended once, last.
type AttemptObserver interface {
	// Step sees a step event the engine published: typ is EventStepStart,
	// EventStepComplete or EventStepError, payload the step's payload as the log holds it.
	Step(typ, actor string, payload []byte)
	// Streamed sees the attempt's first streamed delta (time to first
	// token); later ones are not reported.
	Streamed()
	// Ended sees the attempt's outcome as stored; outcome.Handover says the
	// run goes on elsewhere (a drain, a lost lease, a failed store).
	Ended(outcome AttemptOutcome)
}

// AttemptOutcome is how an attempt ended.
type AttemptOutcome struct {
	State run.TaskState
	Error *run.TaskError
	// Usage is the attempt's own token use.
	Usage    model.TokenUsage
	Handover bool
}

// observedCreate returns the metadata a new task is stored with: meta and
// what the observer adds (meta itself is not changed).
func (r *Runtime) observedCreate(ctx context.Context, run RunInfo, meta map[string]any) map[string]any {
	if r.observer == nil {
		return meta
	}
	add := r.observer.RunCreated(ctx, run)
	if len(add) == 0 {
		return meta
	}
	out := make(map[string]any, len(meta)+len(add))
	maps.Copy(out, meta)
	maps.Copy(out, add)
	return out
}

// observeAttempt tells the observer that the attempt starts and returns the
// engine's context.
func (x *execution) observeAttempt(ctx context.Context) context.Context {
	o := x.r.observer
	if o == nil {
		return ctx
	}
	ctx, x.obs = o.AttemptStarted(ctx, AttemptInfo{
		RunInfo: RunInfo{RunID: x.runID, ContextID: x.contextID, AgentID: x.agent.ID},
		Attempt: x.task.Attempt, Resume: x.resume,
		Metadata: x.task.Metadata, Created: x.task.CreatedAt,
	})
	x.spanCtx = ctx
	return ctx
}

// logContext is the context the attempt's log records are written with:
// the one with its span once the observer opened it. It belongs to the
// execution's goroutine, like the attempt.
func (x *execution) logContext() context.Context {
	if x.spanCtx != nil {
		return x.spanCtx
	}
	return x.ctx
}

// observeEnd tells the observer how the attempt ended.
func (x *execution) observeEnd() {
	if x.obs == nil {
		return
	}
	x.mu.Lock()
	usage := x.usage
	x.mu.Unlock()
	x.obs.Ended(AttemptOutcome{
		State: x.task.State, Error: x.task.Error, Usage: usage,
		Handover: !x.finished || x.handover,
	})
}

// engineHost is the host the engine sees: the attempt's own, or, with an
// observer, one that also shows the observer what the engine publishes.
func (x *execution) engineHost() engine.Host {
	if x.obs == nil {
		return &x.host
	}
	return &observedHost{host: &x.host, obs: x.obs}
}

// observedHost is the attempt's host, its Publish reporting steps and the
// first token to the observer. Embedding keeps every other capability of
// host (RunChild, PublishCheckpointed) visible to the engine's type assertions.
type observedHost struct {
	*host
	obs      AttemptObserver
	streamed bool // set by the first delta; Publish is called by one goroutine at a time per stream
}

// Publish logs ev as the attempt's host does, then reports it.
func (h *observedHost) Publish(ctx context.Context, ev engine.Event) error {
	if err := h.host.Publish(ctx, ev); err != nil {
		return err
	}
	switch e := ev.(type) {
	case engine.Token, engine.ToolCall, engine.ToolResult:
		h.host.mu.Lock()
		first := !h.streamed
		h.streamed = true
		h.host.mu.Unlock()
		if first {
			h.obs.Streamed()
		}
	case engine.StepStarted:
		h.step(EventStepStart, stepBody(h.x.step(e.Step), nil))
	case engine.StepCompleted:
		h.step(EventStepComplete, stepBody(h.x.step(e.Step), nil))
	case engine.StepFailed:
		h.step(EventStepError, stepBody(h.x.step(e.Step), stepErr(e)))
	}
	return nil
}

// step shows the observer a step event with its payload as the log holds
// it (encoded again: the observer reads JSON, and steps are few).
func (h *observedHost) step(typ string, d stepData) {
	if payload, err := json.Marshal(d.Payload); err == nil {
		h.obs.Step(typ, d.Actor, payload)
	}
}
