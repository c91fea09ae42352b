package graph

import (
	"context"
	"errors"
	"fmt"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// stepDetail is the Detail of a workflow step's events.
type stepDetail struct {
	Step       string            `json:"step"`
	Agent      string            `json:"agent,omitempty"`
	Status     StepStatus        `json:"status,omitempty"`
	Attempt    int               `json:"attempt,omitempty"`
	DurationMS int64             `json:"duration_ms,omitempty"`
	Usage      *model.TokenUsage `json:"usage,omitempty"`
	Reason     string            `json:"reason,omitempty"`
}

// runStep runs one step of sc to a recorded result: its condition, then
// its attempts (1 + retries, with exponential backoff between them), each
// under the step's timeout. A failure is recorded, not returned (an abort
// strategy also stops the run); the error says why the run stops.
func (x *execution) runStep(ctx context.Context, sc *scope, s *Step) error {
	id := sc.id(s)
	if _, ok := x.result(id); ok {
		return nil
	}
	if s.cond.prog != nil {
		run, err := s.cond.evalBool(x.celVars(sc, s))
		if err != nil {
			return x.fail(id, s, 0, fmt.Errorf("condition: %w", err))
		}
		if !run {
			r := &StepResult{Status: StepSkipped, SkipReason: skipCondition}
			x.publishSettled(id, s, r)
			return x.record(id, r)
		}
	}
	var err error
	for attempt := 1; ; attempt++ {
		if stop := x.stopErr(); stop != nil {
			return stop
		}
		var r *StepResult
		r, err = x.attempt(ctx, sc, s, id, attempt)
		if err == nil {
			return x.record(id, r)
		}
		if isStop(err) || errdefs.IsBudgetExceeded(err) {
			// A child that stopped on its own (its agent asked the user and
			// the host parked the run) stops the whole workflow with it.
			var ie engine.InterruptedError
			if errors.As(err, &ie) {
				x.interrupt(ie.Interrupt)
			}
			if stop := x.stopErr(); stop != nil {
				return stop
			}
			return err
		}
		if attempt > s.Retries {
			break
		}
		x.forget(id)
		if werr := x.waitFor(ctx, x.backoff(attempt)); werr != nil {
			return x.stopOr(werr)
		}
	}
	return x.fail(id, s, s.Retries+1, err)
}

// attempt runs one attempt of s and publishes its step events.
func (x *execution) attempt(ctx context.Context, sc *scope, s *Step, id string, n int) (*StepResult, error) {
	info := engine.Step{RunID: x.run.ID, Actor: engine.NodeActor(x.actor, id), Kind: stepKind(s)}
	info.Detail = stepDetail{Step: id, Agent: s.Agent, Attempt: n}
	_ = x.host.Publish(x.ctx, engine.StepStarted{Step: info})
	start := time.Now()
	timeout := s.Timeout
	if timeout == 0 {
		timeout = x.e.wf.Options.StepTimeout
	}
	stepCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		stepCtx, cancel = context.WithTimeout(ctx, time.Duration(timeout))
	}
	var r *StepResult
	var err error
	switch {
	case s.Include != "":
		r, err = x.runInclude(stepCtx, sc, s, id)
	case s.Loop != nil:
		r, err = x.runLoop(stepCtx, sc, s, id)
	default:
		var prompt string
		if prompt, err = x.prompt(sc, s); err == nil {
			r, err = x.runAgent(stepCtx, sc, s, id, n, s.Agent, s.Model, prompt)
		}
	}
	if err != nil && ctx.Err() == nil && errors.Is(stepCtx.Err(), context.DeadlineExceeded) {
		err = errdefs.Timeoutf("step %q: timed out after %s", id, timeout)
	}
	cancel()
	d := stepDetail{Step: id, Agent: s.Agent, Attempt: n, DurationMS: time.Since(start).Milliseconds()}
	if r != nil && !r.Usage.IsZero() {
		d.Usage = &r.Usage
	}
	info.Detail = d
	if err != nil {
		d.Status = StepFailed
		info.Detail = d
		_ = x.host.Publish(x.ctx, engine.StepFailed{Step: info, Err: err})
		return nil, err
	}
	r.Status, r.Attempts, r.DurationMS = StepCompleted, n, d.DurationMS
	d.Status = StepCompleted
	info.Detail = d
	_ = x.host.Publish(x.ctx, engine.StepCompleted{Step: info})
	x.emitArtifact(id, r)
	return r, nil
}

// fail records a step's failure and applies the abort strategy.
func (x *execution) fail(id string, s *Step, attempts int, cause error) error {
	r := &StepResult{Status: StepFailed, Error: cause.Error(), Attempts: attempts}
	if attempts == 0 {
		x.publishSettled(id, s, r)
	}
	if err := x.record(id, r); err != nil {
		return err
	}
	if x.e.wf.Options.OnStepFailure == FailureAbort {
		x.abort(fmt.Errorf("workflow %q: step %q failed (onStepFailure: abort): %w", x.e.wf.Name, id, cause))
	}
	return nil
}

// publishSettled publishes the events of a step that settles without
// running: skipped, cancelled, or failed before its first attempt.
func (x *execution) publishSettled(id string, s *Step, r *StepResult) {
	info := engine.Step{RunID: x.run.ID, Actor: engine.NodeActor(x.actor, id), Kind: stepKind(s),
		Detail: stepDetail{Step: id, Agent: s.Agent, Status: r.Status, Reason: r.SkipReason}}
	_ = x.host.Publish(x.ctx, engine.StepStarted{Step: info})
	if r.Status == StepFailed {
		_ = x.host.Publish(x.ctx, engine.StepFailed{Step: info, Err: errors.New(r.Error)})
		return
	}
	_ = x.host.Publish(x.ctx, engine.StepCompleted{Step: info})
}

// emitArtifact publishes a completed step's content as an artifact named
// after the step.
func (x *execution) emitArtifact(id string, r *StepResult) {
	if r.Content == "" {
		return
	}
	_ = x.host.Publish(x.ctx, engine.ArtifactUpdate{
		Artifact:  model.Artifact{ID: "step-" + id, Name: id, Parts: []model.Part{model.TextPart(r.Content)}},
		LastChunk: true,
	})
}

// backoff is the wait before retry n+1: RetryBackoff doubled n-1 times,
// at most MaxRetryBackoff.
func (x *execution) backoff(n int) time.Duration {
	d := x.e.cfg.RetryBackoff
	for i := 1; i < n && d < MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, MaxRetryBackoff)
}

// stopOr prefers the run's stop reason to err.
func (x *execution) stopOr(err error) error {
	if stop := x.stopErr(); stop != nil {
		return stop
	}
	return err
}

// celVars is what s's condition sees: its scope's steps and loop variables.
func (x *execution) celVars(sc *scope, s *Step) celVars {
	v := celVars{Steps: map[string]stepView{}, Item: sc.item, Index: sc.index, Iteration: sc.iteration}
	for _, other := range sc.steps {
		if r, ok := x.result(sc.id(other)); ok {
			v.Steps[other.ID] = r.view()
		}
	}
	return v
}
