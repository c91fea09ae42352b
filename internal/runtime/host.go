package runtime

import (
	"agentd/internal/calltree"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/event"
	"agentd/internal/model"
	"agentd/internal/runlog"
	"agentd/internal/runlog/jsonfast"
	"agentd/internal/store"
)

// host is the engine.Host of one attempt. Publish turns engine envelopes
// into events of the run's log; Interrupts delivers cancels; AskUser parks
// the run in input-required; Checkpoint persists; ReportUsage enforces
// budgets.
type host struct {
	x  *execution
	id string // the run's id as subjects carry it (engine.SanitiseID)

	mu     sync.Mutex
	prompt *engine.UserPrompt
	reply  *engine.UserReply
	ended  bool // the attempt's run.end was logged; later envelopes are dropped
	// expired: the attempt resumes a run whose prompt expired unanswered
	// (engine.SignalTimeout); the first AskUser answers it with a Timeout.
	expired bool
}

// Publish appends the envelope to the run's event log. Engine lifecycle
// envelopes (run start/end) are not logged: the runtime frames every attempt
// with its own run.start and run.end so that invariant 2 holds whatever the
// engine does.
func (h *host) Publish(ctx context.Context, env event.Envelope) error {
	typ, body, err := h.event(env)
	if err != nil || typ == "" {
		return err
	}
	if err := h.x.awaitBacklog(ctx); err != nil {
		return err
	}
	h.x.log.Append(typ, body)
	return nil
}

// event is the log event of env (typ empty: env is not logged), refused
// once the attempt has ended.
func (h *host) event(env event.Envelope) (string, runlog.Body, error) {
	rest, ok := strings.CutPrefix(string(env.Subject), engine.SubjectPrefix)
	if ok {
		rest, ok = strings.CutPrefix(rest, h.id)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, ".")
	}
	if !ok {
		return "", runlog.Body{}, errdefs.Validationf("publish: subject %q does not belong to run %s", env.Subject, h.x.runID)
	}
	kind, actor := kindOf(rest)
	if kind == kindUnknown {
		return "", runlog.Body{}, errdefs.Validationf("publish: unknown subject suffix %q", rest)
	}
	typ, body, err := h.translate(kind, actor, env)
	if err != nil || typ == "" {
		return "", runlog.Body{}, err
	}
	h.mu.Lock()
	ended := h.ended
	h.mu.Unlock()
	if ended {
		return "", runlog.Body{}, errdefs.Conflictf("publish %s: attempt of run %s has ended", env.Subject, h.x.runID)
	}
	return typ, body, nil
}

// PublishCheckpointed publishes env and stages cp, stamped, to be saved
// in the same store transaction as env's event (engine.CheckpointedPublisher,
// runlog's AppendCheckpointed): a relaying engine's checkpoint is durable
// exactly when the events it covers are. A volatile store holds cp as
// Checkpoint does; an envelope that is not logged saves cp as Checkpoint
// does.
func (h *host) PublishCheckpointed(ctx context.Context, env event.Envelope, cp engine.Checkpoint) error {
	typ, body, err := h.event(env)
	if err != nil {
		return err
	}
	if typ == "" || h.x.r.volatile {
		if typ != "" {
			h.x.log.Append(typ, body)
		}
		return h.Checkpoint(ctx, cp)
	}
	if err := h.x.checkCheckpoint(&cp); err != nil {
		return err
	}
	if err := h.x.awaitBacklog(ctx); err != nil {
		return err
	}
	h.x.log.AppendCheckpointed(typ, body, h.x.stamp(cp))
	return nil
}

// envelopeKind is what an engine envelope reports, read from its subject
// once (kindOf); translate switches on it.
type envelopeKind int

const (
	kindUnknown  envelopeKind = iota
	kindRunFrame              // run.start or run.end: the runtime logs its own
	kindArtifact
	kindProgress
	kindHandoff
	kindPlan
	kindDelta
	kindStepStart
	kindStepComplete
	kindStepError
	kindVerdict
	kindCompaction
)

// kindOf reads the subject's suffix after the run: a fixed name
// ("artifact", "progress", …) or <kind>.<actor>.<verb>, whose actor it
// returns too.
func kindOf(rest string) (envelopeKind, string) {
	switch rest {
	case "start", "end":
		return kindRunFrame, ""
	case "artifact":
		return kindArtifact, ""
	case engine.SubjectProgress:
		return kindProgress, ""
	case engine.SubjectHandoff:
		return kindHandoff, ""
	case engine.SubjectPlan:
		return kindPlan, ""
	}
	kind, actorVerb, _ := strings.Cut(rest, ".")
	i := strings.LastIndexByte(actorVerb, '.')
	if i < 0 {
		return kindUnknown, ""
	}
	actor := actorVerb[:i]
	switch kind + "." + actorVerb[i+1:] {
	case "stream.delta":
		return kindDelta, actor
	case "step.start":
		return kindStepStart, actor
	case "step.complete":
		return kindStepComplete, actor
	case "step.error":
		return kindStepError, actor
	case "governance.verdict":
		return kindVerdict, actor
	case "context.compaction":
		return kindCompaction, actor
	}
	return kindUnknown, ""
}

// stepEvents are the event types of the step kinds.
var stepEvents = map[envelopeKind]string{
	kindStepStart: EventStepStart, kindStepComplete: EventStepComplete, kindStepError: EventStepError,
}

// translate maps an envelope of kind, from actor, to an event type and
// body. An empty type means the envelope is not logged.
func (h *host) translate(kind envelopeKind, actor string, env event.Envelope) (string, runlog.Body, error) {
	switch kind {
	case kindArtifact:
		var a ArtifactData
		if err := json.Unmarshal(env.Payload, &a); err != nil || a.Artifact.ID == "" {
			return "", runlog.Body{}, errdefs.Validationf("publish artifact: payload must be {\"artifact\":{\"id\":…,\"parts\":[…]},\"append\":…,\"last_chunk\":…}: %v", err)
		}
		h.x.noteArtifact(a)
		body, err := encodeBody(a) // normalised: compact, one JSON object
		return EventArtifact, runlog.Object(body), err
	case kindProgress:
		return progressEvent(env)
	case kindHandoff:
		return handoffEvent(env)
	case kindPlan:
		if !json.Valid(env.Payload) {
			return "", runlog.Body{}, errdefs.Validationf("publish plan: payload is not JSON")
		}
		body, err := encodeBody(PlanData{Actor: env.AgentID, Plan: env.Payload})
		return EventPlan, runlog.Object(body), err
	case kindDelta:
		return deltaEvent(actor, env)
	case kindStepStart, kindStepComplete, kindStepError:
		body, err := encodeBody(StepData{Actor: actor, Payload: env.Payload})
		return stepEvents[kind], runlog.Object(body), err
	case kindVerdict:
		body, err := governanceBody(actor, env.Payload)
		return EventGovernance, runlog.Object(body), err
	case kindCompaction:
		body, err := compactionBody(actor, env.Payload)
		return EventContextCompaction, runlog.Object(body), err
	}
	return "", runlog.Body{}, nil // kindRunFrame
}

// deltaEvent is the delta event of a stream-delta envelope. A plain token,
// the bulk of all events, takes the fast path: its text is spliced into
// the event still encoded (jsonfast), not decoded and encoded again.
func deltaEvent(actor string, env event.Envelope) (string, runlog.Body, error) {
	if text, ok := engine.RawStreamToken(env.Payload); ok && jsonfast.Plain(actor) {
		return EventDelta, runlog.Splice(actor, "text", text), nil
	}
	d, err := engine.DecodeStreamDelta(env)
	if err != nil {
		return "", runlog.Body{}, errdefs.Validation(err)
	}
	body, err := encodeDelta(actor, d)
	return EventDelta, runlog.Object(body), err
}

func encodeDelta(actor string, d engine.StreamDeltaPayload) (json.RawMessage, error) {
	out := DeltaData{Actor: actor}
	switch d.Type {
	case engine.StreamDeltaToken:
		out.Text = d.Content
	case engine.StreamDeltaToolCall:
		args, err := argumentsJSON(d.Arguments)
		if err != nil {
			return nil, err
		}
		out.ToolCall = &model.ToolCall{ID: d.ID, Name: d.Name, Arguments: args}
	case engine.StreamDeltaToolResult:
		out.ToolResult = &model.ToolResult{ToolCallID: d.ToolCallID, Name: d.Name, Content: d.Content, IsError: d.IsError}
	default:
		return nil, nil // forward-compatible: unknown delta kinds are skipped
	}
	return encodeBody(out)
}

// argumentsJSON accepts tool arguments as a JSON string or a decoded value.
func argumentsJSON(v any) (json.RawMessage, error) {
	switch a := v.(type) {
	case nil:
		return nil, nil
	case string:
		if a == "" {
			return nil, nil
		}
		if json.Valid([]byte(a)) {
			return json.RawMessage(a), nil
		}
		return json.Marshal(a)
	case json.RawMessage:
		return a, nil
	default:
		return json.Marshal(a)
	}
}

// FramesRuns tells the engine helpers not to publish run start and end:
// the runtime logs its own for every attempt (engine.RunFramer).
func (h *host) FramesRuns() bool { return true }

// Interrupts delivers cooperative stop requests (cancel, shutdown, a newer
// message under the interrupt policy).
func (h *host) Interrupts() <-chan engine.Interrupt { return h.x.interrupts }

// errInputRequired is what AskUser answers when it parks the run.
var _ engine.CheckpointedPublisher = (*host)(nil)

var errInputRequired = engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})

// AskUser answers with the user's reply when this attempt resumes a run that
// asked; otherwise it records the prompt and returns an interrupt: the engine
// stops, the run parks in input-required (its goroutine released), and the
// next message to the task resumes it from its latest checkpoint, where the
// same AskUser call receives the reply.
func (h *host) AskUser(_ context.Context, prompt engine.UserPrompt) (engine.UserReply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reply != nil {
		r := *h.reply
		h.reply = nil
		return r, nil
	}
	if h.expired {
		h.expired = false
		return engine.UserReply{}, errdefs.Timeoutf("ask user (source %q): the prompt of run %s expired unanswered", prompt.Source, h.x.runID)
	}
	if len(prompt.Parts) == 0 {
		return engine.UserReply{}, errdefs.Validationf("ask user (source %q): empty prompt", prompt.Source)
	}
	p := prompt
	h.prompt = &p
	return engine.UserReply{}, errInputRequired
}

// pendingPrompt returns the prompt that parked the run, if any.
func (h *host) pendingPrompt() *engine.UserPrompt {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.prompt
}

// Checkpoint saves cp, stamped for this attempt (see stamp), once every
// event published before it is durable.
//
// With a volatile store a checkpoint is no more durable in the store than
// in this process, and only a later attempt reads it: the latest one is
// held, and stamped and written only when the attempt ends in a state
// another attempt goes on from (input-required, a handover) — most runs
// complete, and never need it. The engine's snapshot is a copy of its
// board (engine.Board Snapshot), so holding it is safe.
func (h *host) Checkpoint(ctx context.Context, cp engine.Checkpoint) error {
	x := h.x
	if err := x.checkCheckpoint(&cp); err != nil {
		return err
	}
	if x.r.volatile && !x.keepCheckpoints {
		x.mu.Lock()
		x.heldCheckpoint = &cp
		x.mu.Unlock()
		x.pauseAtBoundary()
		return nil
	}
	// A resumed attempt trusts the checkpoint not to need what it covers
	// again, so the events published before it are made durable with it,
	// in one write: a lost attempt never leaves deltas no stream will
	// ever carry.
	stamped := x.stamp(cp)
	if err := x.r.retry(ctx, "checkpoint save", x.runID, func() error {
		return x.log.FlushCheckpoint(ctx, stamped)
	}); err != nil {
		return err
	}
	// Relayed feedback the checkpoint holds leaves the task (signals_relay.go).
	x.consumeCheckpointed(ctx, cp)
	x.pauseAtBoundary() // the safe boundary a pause waits for (signals.go)
	return nil
}

// StageCheckpoint stages cp, stamped, to be saved by the log's next write
// (engine.CheckpointStager): the loop's checkpoint of a final answer rides
// in the run's final commit instead of a write of its own. A checkpoint
// that settles relayed feedback is saved at once, as Checkpoint does: the
// feedback leaves the task only once a checkpoint holding it is durable.
func (h *host) StageCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	x := h.x
	if x.r.volatile || x.holdsRelayedFeedback(cp) {
		return h.Checkpoint(ctx, cp)
	}
	if err := x.checkCheckpoint(&cp); err != nil {
		return err
	}
	x.log.StageCheckpoint(x.stamp(cp))
	x.pauseAtBoundary()
	return nil
}

// checkCheckpoint refuses a checkpoint of another run or without a
// board; an unnamed one is the run's.
func (x *execution) checkCheckpoint(cp *engine.Checkpoint) error {
	if cp.ExecID == "" {
		cp.ExecID = x.runID
	}
	if cp.ExecID != x.runID {
		return errdefs.Validationf("checkpoint: exec id %q is not run %s", cp.ExecID, x.runID)
	}
	if cp.Board == nil {
		return errdefs.Validationf("checkpoint of run %s at step %q: no board", x.runID, cp.Step)
	}
	return nil
}

// stamp returns cp with the attempt (so that a stale replica cannot
// overwrite a newer checkpoint) and the original start time, and with
// unnamed transcript messages named deterministically; cp's maps and
// slices, the engine's, are copied rather than changed.
func (x *execution) stamp(cp engine.Checkpoint) engine.Checkpoint {
	attrs := make(map[string]string, len(cp.Attributes)+1)
	for k, v := range cp.Attributes {
		attrs[k] = v
	}
	attrs[store.AttrAttempt] = itoa(x.task.Attempt)
	cp.Attributes = attrs
	if cp.OriginalStartedAt.IsZero() {
		cp.OriginalStartedAt = x.task.CreatedAt
	}
	if msgs := cp.Board.Channels[engine.MainChannel]; slices.ContainsFunc(msgs, unnamed) {
		named := make([]model.Message, len(msgs))
		for i, m := range msgs {
			named[i] = m
			if named[i].ID == "" {
				named[i].ID = messageID(x.runID, i)
			}
		}
		snap := *cp.Board
		snap.Channels = make(map[string][]model.Message, len(cp.Board.Channels))
		for k, v := range cp.Board.Channels {
			snap.Channels[k] = v
		}
		snap.Channels[engine.MainChannel] = named
		cp.Board = &snap
	}
	return cp
}

func unnamed(m model.Message) bool { return m.ID == "" }

// ReportUsage accumulates usage (by model, too) and enforces the run's
// and the agent's token budgets.
func (h *host) ReportUsage(ctx context.Context, modelName string, u model.TokenUsage) error {
	err := h.x.addUsage(modelName, u)
	if terr := calltree.Charge(ctx, u.Add(model.TokenUsage{}).TotalTokens); err == nil {
		err = terr
	}
	return err
}

// messageNS namespaces derived message ids.
var messageNS = uuid.MustParse("6f0b8a4e-2d1c-4b7e-9a53-0c8e5f1d7a21")

// messageID names the i-th message of a run's main channel when the engine
// left it unnamed. The name is stable across checkpoints and resumes, so a
// message is never stored twice.
func messageID(runID string, i int) string {
	return uuid.NewSHA1(messageNS, []byte(runID+"/"+itoa(i))).String()
}
