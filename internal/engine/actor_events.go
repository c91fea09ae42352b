package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/event"
)

// ActorEvents publishes the events of one step actor in one run — step
// start, complete and error, and stream deltas — exactly as
// PublishStepStart, PublishStepComplete, PublishStepError and
// EmitStreamDelta do. It builds the subjects and routing fields once, in
// one allocation, for engines that publish many events per actor (the
// loop publishes a step pair per model turn and per tool call, and a delta
// per token). Tokens are encoded by jsonfast (see encodeToken), every
// other payload with encoding/json.
//
// Step details arrive already encoded as JSON; encoding/json checks and
// compacts them, as it does a StepInfo's. The zero value is not usable;
// call NewActorEvents.
type ActorEvents struct {
	pub             Publisher
	runID, actor    string
	agentID, nodeID string
	stepStart       event.Subject
	stepComplete    event.Subject
	stepError       event.Subject
	streamDelta     event.Subject
}

// NewActorEvents returns the publisher of stepActor's events in run
// runID. stepActor follows the rules of the package-level helpers: it
// starts with the agent id and may carry a ".node.<id>" or ".iter<N>"
// suffix.
func NewActorEvents(pub Publisher, runID, stepActor string) ActorEvents {
	var agentID, nodeID string
	if stepActor != "" {
		agentID, nodeID = ParseStepActor(stepActor)
	}
	// The four subjects share one string: engine.run.<run>.<kind>.<actor>.<verb>
	// back to back, sliced apart below.
	run, actor := SanitiseID(runID), SanitiseID(stepActor)
	shapes := [...]struct{ kind, verb string }{
		{".step.", ".start"}, {".step.", ".complete"}, {".step.", ".error"}, {".stream.", ".delta"},
	}
	n := 0
	for _, s := range shapes {
		n += len(SubjectPrefix) + len(run) + len(s.kind) + len(actor) + len(s.verb)
	}
	var b strings.Builder
	b.Grow(n)
	var ends [len(shapes)]int
	for i, s := range shapes {
		b.WriteString(SubjectPrefix)
		b.WriteString(run)
		b.WriteString(s.kind)
		b.WriteString(actor)
		b.WriteString(s.verb)
		ends[i] = b.Len()
	}
	all := b.String()
	return ActorEvents{
		pub: pub, runID: runID, actor: stepActor, agentID: agentID, nodeID: nodeID,
		stepStart:    event.Subject(all[:ends[0]]),
		stepComplete: event.Subject(all[ends[0]:ends[1]]),
		stepError:    event.Subject(all[ends[1]:ends[2]]),
		streamDelta:  event.Subject(all[ends[2]:ends[3]]),
	}
}

// StepStart publishes step.start for a step of kind with detail, the
// step's Detail encoded as JSON (empty for none).
func (a *ActorEvents) StepStart(ctx context.Context, kind string, detail json.RawMessage) error {
	return a.step(ctx, a.stepStart, kind, detail, nil)
}

// StepComplete publishes step.complete, like StepStart.
func (a *ActorEvents) StepComplete(ctx context.Context, kind string, detail json.RawMessage) error {
	return a.step(ctx, a.stepComplete, kind, detail, nil)
}

// StepError publishes step.error for a step failing with err, like
// PublishStepError: on a context detached from ctx's cancellation, and
// with an Internal error standing in for a nil err.
func (a *ActorEvents) StepError(ctx context.Context, kind string, detail json.RawMessage, err error) error {
	if err == nil {
		err = errdefs.Internalf("step %q failed without an error", a.actor)
	}
	return a.step(context.WithoutCancel(ctx), a.stepError, kind, detail, err)
}

func (a *ActorEvents) step(ctx context.Context, subject event.Subject, kind string, detail json.RawMessage, stepErr error) error {
	payload, err := stepPayload(a.runID, a.actor, kind, detail, stepErr)
	if err != nil {
		return err
	}
	return a.pub.Publish(ctx, a.envelope(subject, payload))
}

// Token publishes one piece of assistant text, as EmitStreamToken does.
func (a *ActorEvents) Token(ctx context.Context, content string) error {
	if content == "" {
		return fmt.Errorf("emit on run %q step %q: %w", a.runID, a.actor, StreamDeltaPayload{Type: StreamDeltaToken}.Validate())
	}
	return a.pub.Publish(ctx, a.envelope(a.streamDelta, encodeToken(content)))
}

// Delta publishes any stream delta, as EmitStreamDelta does.
func (a *ActorEvents) Delta(ctx context.Context, payload StreamDeltaPayload) error {
	if err := payload.Validate(); err != nil {
		return fmt.Errorf("emit on run %q step %q: %w", a.runID, a.actor, err)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return errdefs.Validationf("encode %s payload: %w", a.streamDelta, err)
	}
	return a.pub.Publish(ctx, a.envelope(a.streamDelta, b))
}

// envelope stamps payload with the subject, the time and the routing
// fields newEnvelope would give it.
func (a *ActorEvents) envelope(subject event.Subject, payload json.RawMessage) event.Envelope {
	return event.Envelope{
		Subject: subject, Time: time.Now().UTC(), RunID: a.runID,
		AgentID: a.agentID, NodeID: a.nodeID, Payload: payload,
	}
}

// stepPayload encodes the StepPayload of a step event; detail is the
// step's Detail, already JSON (encoding/json checks and compacts it).
func stepPayload(runID, actor, kind string, detail json.RawMessage, stepErr error) (json.RawMessage, error) {
	p := StepPayload{RunID: runID, Actor: actor, Kind: kind, Detail: detail}
	if stepErr != nil {
		p.Error, p.ErrorClass = stepErr.Error(), errdefs.ClassOf(stepErr)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, errdefs.Validationf("step %q detail: %w", actor, err)
	}
	return b, nil
}
