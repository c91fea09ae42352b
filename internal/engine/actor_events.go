package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/event"
	"agentd/internal/jsonscan"
	"agentd/internal/model"
)

// ActorEvents publishes the events of one step actor in one run — step
// start, complete and error, and stream deltas — exactly as
// PublishStepStart, PublishStepComplete, PublishStepError and
// EmitStreamDelta do. It builds the subjects and routing fields once, in
// one allocation, and encodes step payloads without reflection, for
// engines that publish many events per actor (the loop publishes a step
// pair per model turn and per tool call, and a delta per token).
//
// Step details arrive already encoded: the caller may encode them by hand
// and reuse its buffer, since ActorEvents copies them into the payload.
// Token payloads are carved from shared chunks (see tokenArena), so Token
// and Delta must be called from one goroutine at a time, and an
// ActorEvents must not be copied once in use (go vet reports copies); the
// step methods may be called from any goroutine. The zero value is not
// usable; call NewActorEvents.
type ActorEvents struct {
	_               noCopy
	pub             Publisher
	runID, actor    string
	agentID, nodeID string
	stepStart       event.Subject
	stepComplete    event.Subject
	stepError       event.Subject
	streamDelta     event.Subject
	tokens          tokenArena
	// trusted is set by TrustDetails: step details are not checked.
	trusted bool
}

// noCopy makes go vet's copylocks check report copies of a struct that
// holds it.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

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

// TrustDetails declares that every step detail given to a from now on is
// already json.Marshal output — compact and escaped, a fixed point of
// encoding it as a json.RawMessage — so the step methods use it as is
// instead of checking it. It is for engines that encode their details by
// hand with model.AppendJSONString and test them against encoding/json;
// call it before a is in use.
func (a *ActorEvents) TrustDetails() { a.trusted = true }

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
	if len(detail) > 0 && !a.trusted && !jsonscan.Compact(detail) {
		// What json.Marshal would make of it: compacted and escaped.
		d, err := json.Marshal(detail)
		if err != nil {
			return errdefs.Validationf("step %q detail: %w", a.actor, err)
		}
		detail = d
	}
	env := a.envelope(subject, appendStepPayload(nil, a.runID, a.actor, kind, detail, stepErr))
	env.PayloadMarshalled = true
	return a.pub.Publish(ctx, env)
}

// Token publishes one piece of assistant text, as EmitStreamToken does.
func (a *ActorEvents) Token(ctx context.Context, content string) error {
	if content == "" {
		return fmt.Errorf("emit on run %q step %q: %w", a.runID, a.actor, StreamDeltaPayload{Type: StreamDeltaToken}.Validate())
	}
	return a.pub.Publish(ctx, a.envelope(a.streamDelta, a.tokens.encode(content)))
}

// Delta publishes any stream delta, as EmitStreamDelta does.
func (a *ActorEvents) Delta(ctx context.Context, payload StreamDeltaPayload) error {
	if err := payload.Validate(); err != nil {
		return fmt.Errorf("emit on run %q step %q: %w", a.runID, a.actor, err)
	}
	if payload == (StreamDeltaPayload{Type: StreamDeltaToken, Content: payload.Content}) {
		return a.pub.Publish(ctx, a.envelope(a.streamDelta, a.tokens.encode(payload.Content)))
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

// appendStepPayload appends the StepPayload of a step event as
// json.Marshal encodes it. detail must be json.Marshal output itself
// (compact and escaped), as a marshalled StepPayload's would be.
func appendStepPayload(b []byte, runID, actor, kind string, detail json.RawMessage, stepErr error) []byte {
	var msg string
	var class errdefs.Class
	if stepErr != nil {
		msg, class = stepErr.Error(), errdefs.ClassOf(stepErr)
	}
	if b == nil {
		// Room for the members as written below; escapes may still grow it.
		b = make([]byte, 0, 64+len(runID)+len(actor)+len(kind)+len(detail)+len(msg)+len(class))
	}
	b = append(b, `{"run_id":`...)
	b = model.AppendJSONString(b, runID)
	b = append(b, `,"actor":`...)
	b = model.AppendJSONString(b, actor)
	if kind != "" {
		b = append(b, `,"kind":`...)
		b = model.AppendJSONString(b, kind)
	}
	if len(detail) > 0 {
		b = append(b, `,"detail":`...)
		b = append(b, detail...)
	}
	if msg != "" {
		b = append(b, `,"error":`...)
		b = model.AppendJSONString(b, msg)
	}
	if class != "" {
		b = append(b, `,"error_class":`...)
		b = model.AppendJSONString(b, string(class))
	}
	return append(b, '}')
}
