package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/event"
)

// The lifecycle helpers publish run and step events in one shape for all
// engines. The payloads are JSON objects:
//
//	run.start      {"run_id", "parent_run_id"?, "attempt"?, "signal"?,
//	                "resumed"?, "resume_step"?}
//	run.end        {"run_id", "status", "error"?, "error_class"?, "cause"?}
//	step.start     {"run_id", "actor", "kind"?, "detail"?}
//	step.complete  {"run_id", "actor", "kind"?, "detail"?}
//	step.error     {"run_id", "actor", "kind"?, "detail"?, "error",
//	                "error_class"}
//
// Run envelopes carry RunID and, when run.Attributes has one under
// event.HeaderAgentID, AgentID; step envelopes carry RunID, AgentID and
// NodeID from the step actor.

// RunStatus is the outcome of one attempt, as run.end reports it.
type RunStatus string

// The outcomes of an attempt.
const (
	RunCompleted   RunStatus = "completed"   // Execute returned nil
	RunFailed      RunStatus = "failed"      // any other error, deadlines included
	RunInterrupted RunStatus = "interrupted" // an Interrupt was honoured
	RunCanceled    RunStatus = "canceled"    // ctx was cancelled (errdefs.Aborted)
)

// RunStatusOf maps the error Execute returns to the run.end status.
func RunStatusOf(err error) RunStatus {
	switch {
	case err == nil:
		return RunCompleted
	case errdefs.IsInterrupted(err):
		return RunInterrupted
	case errdefs.IsAborted(err) || errors.Is(err, context.Canceled):
		return RunCanceled
	default:
		return RunFailed
	}
}

// RunStartPayload is the payload of run.start. Attempt, Signal, Resumed
// and ResumeStep come from the ResumeContext on ctx and run.ResumeFrom.
type RunStartPayload struct {
	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Attempt     int    `json:"attempt,omitempty"`
	Signal      string `json:"signal,omitempty"`
	Resumed     bool   `json:"resumed,omitempty"`
	ResumeStep  string `json:"resume_step,omitempty"`
}

// RunEndPayload is the payload of run.end. Error and ErrorClass describe a
// non-nil error; Cause is set when the run was interrupted.
type RunEndPayload struct {
	RunID      string        `json:"run_id"`
	Status     RunStatus     `json:"status"`
	Error      string        `json:"error,omitempty"`
	ErrorClass errdefs.Class `json:"error_class,omitempty"`
	Cause      Cause         `json:"cause,omitempty"`
}

// StepPayload is the payload of step.start, step.complete and step.error.
// Actor is the raw step actor; Kind an engine-defined step kind ("model",
// "tool", "node", …); Detail engine-specific JSON.
type StepPayload struct {
	RunID      string          `json:"run_id"`
	Actor      string          `json:"actor"`
	Kind       string          `json:"kind,omitempty"`
	Detail     json.RawMessage `json:"detail,omitempty"`
	Error      string          `json:"error,omitempty"`
	ErrorClass errdefs.Class   `json:"error_class,omitempty"`
}

// StepInfo names a step for the step helpers. Detail, when set, is encoded
// as JSON into StepPayload.Detail.
type StepInfo struct {
	Actor  string
	Kind   string
	Detail any
}

// RunFramer is implemented by a Publisher that frames every attempt with
// run start and end events of its own and drops the engine's (agentd's
// runtime does, so that an engine that forgets its run.end cannot break
// the log). PublishRunStart and PublishRunEnd then publish nothing.
type RunFramer interface {
	FramesRuns() bool
}

// framed reports whether pub frames runs itself.
func framed(pub Publisher) bool {
	f, ok := pub.(RunFramer)
	return ok && f.FramesRuns()
}

// PublishRunStart publishes run.start; call it first thing in Execute.
func PublishRunStart(ctx context.Context, pub Publisher, run Run) error {
	if framed(pub) {
		return nil
	}
	p := RunStartPayload{RunID: run.ID, ParentRunID: run.ParentRunID}
	if rc, ok := ResumeContextFromContext(ctx); ok {
		p.Attempt, p.Signal = rc.Attempt, rc.Signal
	}
	if run.ResumeFrom != nil {
		p.Resumed, p.ResumeStep = true, run.ResumeFrom.Step
	}
	return publishRunEvent(ctx, pub, SubjectRunStart(run.ID), run, p)
}

// PublishRunEnd publishes run.end for the outcome err; call it exactly
// once, last, on every exit path (a deferred call is the easy way). It
// publishes on a context detached from ctx's cancellation, because the
// cancel and deadline paths need their run.end too.
func PublishRunEnd(ctx context.Context, pub Publisher, run Run, err error) error {
	if framed(pub) {
		return nil
	}
	p := RunEndPayload{RunID: run.ID, Status: RunStatusOf(err)}
	if err != nil {
		p.Error, p.ErrorClass = err.Error(), errdefs.ClassOf(err)
		var ie InterruptedError
		if errors.As(err, &ie) {
			p.Cause = ie.Cause
		}
	}
	return publishRunEvent(context.WithoutCancel(ctx), pub, SubjectRunEnd(run.ID), run, p)
}

// DecodeRunEnd decodes the payload of a run.end envelope.
func DecodeRunEnd(env event.Envelope) (RunEndPayload, error) {
	var p RunEndPayload
	if err := json.Unmarshal(env.Payload, &p); err != nil {
		return p, errdefs.Validationf("run.end on %q: %w", env.Subject, err)
	}
	return p, nil
}

func publishRunEvent(ctx context.Context, pub Publisher, subject event.Subject, run Run, payload any) error {
	env, err := newEnvelope(subject, run.ID, "", payload)
	if err != nil {
		return err
	}
	env.AgentID = run.Attributes[event.HeaderAgentID]
	return pub.Publish(ctx, env)
}

// PublishStepStart publishes step.start for step.
func PublishStepStart(ctx context.Context, pub Publisher, runID string, step StepInfo) error {
	return publishStep(ctx, pub, SubjectStepStart(runID, step.Actor), runID, step, nil)
}

// PublishStepComplete publishes step.complete for step.
func PublishStepComplete(ctx context.Context, pub Publisher, runID string, step StepInfo) error {
	return publishStep(ctx, pub, SubjectStepComplete(runID, step.Actor), runID, step, nil)
}

// PublishStepError publishes step.error for step failing with err.
func PublishStepError(ctx context.Context, pub Publisher, runID string, step StepInfo, err error) error {
	if err == nil {
		err = errdefs.Internalf("step %q failed without an error", step.Actor)
	}
	return publishStep(context.WithoutCancel(ctx), pub, SubjectStepError(runID, step.Actor), runID, step, err)
}

func publishStep(ctx context.Context, pub Publisher, subject event.Subject, runID string, step StepInfo, stepErr error) error {
	var detail json.RawMessage
	if step.Detail != nil {
		d, err := json.Marshal(step.Detail)
		if err != nil {
			return errdefs.Validationf("step %q detail: %w", step.Actor, err)
		}
		detail = d
	}
	payload, err := stepPayload(runID, step.Actor, step.Kind, detail, stepErr)
	if err != nil {
		return err
	}
	env := event.Envelope{Subject: subject, Time: time.Now().UTC(), RunID: runID, Payload: payload}
	if step.Actor != "" {
		env.AgentID, env.NodeID = ParseStepActor(step.Actor)
	}
	return pub.Publish(ctx, env)
}
