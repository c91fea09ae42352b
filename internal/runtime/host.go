package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// host is the engine.Host of one attempt. Publish turns engine events
// into events of the run's log; Interrupts delivers cancels; AskUser parks
// the run in input-required; Checkpoint persists; ReportUsage enforces
// budgets.
type host struct {
	x *execution

	mu     sync.Mutex
	prompt *engine.UserPrompt
	reply  *engine.UserReply
	ended  bool // the attempt's run.end was logged; later events are refused
	// expired: the attempt resumes a run whose prompt expired unanswered
	// (engine.SignalTimeout); the first AskUser answers it with a Timeout.
	expired bool
	// outcome is the engine's Outcome (a partial workflow), recorded by
	// the attempt's final commit.
	outcome *engine.Outcome
	// fx is the attempt's view of the effect ledger (effects.go).
	fx effectLedger
}

// Publish appends ev to the run's event log.
func (h *host) Publish(ctx context.Context, ev engine.Event) error {
	if o, ok := ev.(engine.Outcome); ok {
		return h.noteOutcome(o)
	}
	typ, body, err := h.event(ev)
	if err != nil {
		return err
	}
	if err := h.x.awaitBacklog(ctx); err != nil {
		return err
	}
	h.x.log.Append(typ, body)
	return nil
}

// PublishCheckpointed publishes ev and stages cp, stamped, to be saved
// in the same store transaction as ev's event (engine.CheckpointedPublisher,
// runlog's AppendCheckpointed): a relaying engine's checkpoint is durable
// exactly when the events it covers are. A volatile store holds cp as
// Checkpoint does.
func (h *host) PublishCheckpointed(ctx context.Context, ev engine.Event, cp engine.Checkpoint) error {
	typ, body, err := h.event(ev)
	if err != nil {
		return err
	}
	if h.x.r.volatile {
		h.x.log.Append(typ, body)
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

// event is the log event of ev, refused when ev is invalid or the
// attempt has ended.
func (h *host) event(ev engine.Event) (string, runlog.Body, error) {
	if err := engine.Validate(ev); err != nil {
		return "", runlog.Body{}, fmt.Errorf("publish to run %s: %w", h.x.runID, err)
	}
	h.mu.Lock()
	ended := h.ended
	h.mu.Unlock()
	if ended {
		return "", runlog.Body{}, errdefs.Conflictf("publish: attempt of run %s has ended", h.x.runID)
	}
	return h.x.logEvent(ev)
}

// logEvent translates an engine event into an event of the run's log:
// its type and its body, encoded once. It is the one place that knows
// both vocabularies; a new kind of engine event is one case here.
func (x *execution) logEvent(ev engine.Event) (string, runlog.Body, error) {
	switch e := ev.(type) {
	case engine.Token:
		return EventDelta, runlog.Text(logActor(e.Actor), e.Text), nil
	case engine.Reasoning:
		return encodeEvent(EventReasoning, ReasoningData{Actor: logActor(e.Actor), Text: e.Text})
	case engine.ToolCall:
		call := &model.ToolCall{ID: e.ID, Name: e.Name, Arguments: e.Arguments}
		return encodeEvent(EventDelta, DeltaData{Actor: logActor(e.Actor), ToolCall: call})
	case engine.ToolResult:
		res := &model.ToolResult{ToolCallID: e.ToolCallID, Name: e.Name, Content: e.Content, IsError: e.IsError}
		return encodeEvent(EventDelta, DeltaData{Actor: logActor(e.Actor), ToolResult: res})
	case engine.StepStarted:
		return logStep(EventStepStart, x.step(e.Step), nil)
	case engine.StepCompleted:
		return logStep(EventStepComplete, x.step(e.Step), nil)
	case engine.StepFailed:
		return logStep(EventStepError, x.step(e.Step), stepErr(e))
	case engine.ArtifactUpdate:
		x.noteArtifact(e)
		return encodeEvent(EventArtifact, e)
	case engine.ToolProgress:
		return encodeEvent(EventProgress, e)
	case engine.Plan:
		if !json.Valid(e.Plan) {
			return "", runlog.Body{}, errdefs.Validationf("publish plan: plan is not JSON")
		}
		return encodeEvent(EventPlan, PlanData{Actor: e.Actor, Plan: e.Plan})
	case engine.Verdict:
		body, err := governanceBody(logActor(e.Actor), e.Payload)
		return EventGovernance, runlog.Object(body), err
	case engine.Compaction:
		body, err := compactionBody(logActor(e.Actor), e.Payload)
		return EventContextCompaction, runlog.Object(body), err
	case engine.WorkflowNote:
		return workflowEvent(e)
	case engine.Effect:
		typ, err := effectEvent(e)
		if err != nil {
			return "", runlog.Body{}, err
		}
		e.Actor = logActor(e.Actor)
		x.observeEffect(e)
		return encodeEvent(typ, e)
	}
	return "", runlog.Body{}, errdefs.Validationf("publish to run %s: not an event", x.runID)
}

// encodeEvent is the event of type typ with body v, encoded by
// encoding/json.
func encodeEvent(typ string, v any) (string, runlog.Body, error) {
	body, err := runlog.Encode(v)
	if err != nil {
		return "", runlog.Body{}, errdefs.Validationf("publish %s: %w", typ, err)
	}
	return typ, body, nil
}

// stepData is how a step event's body is encoded: StepData, its payload
// still a value.
type stepData struct {
	Actor   string      `json:"actor"`
	Payload stepPayload `json:"payload"`
}

// stepPayload is the payload of a step event (StepData.Payload).
type stepPayload struct {
	RunID      string        `json:"run_id"`
	Actor      string        `json:"actor"`
	Kind       string        `json:"kind,omitempty"`
	Detail     any           `json:"detail,omitempty"`
	Error      string        `json:"error,omitempty"`
	ErrorClass errdefs.Class `json:"error_class,omitempty"`
}

// step is s as this run logs it: a step that names no run is this run's.
func (x *execution) step(s engine.Step) engine.Step {
	if s.RunID == "" {
		s.RunID = x.runID
	}
	return s
}

// stepBody is the body of a step event of s, failed with err if not nil.
func stepBody(s engine.Step, err error) stepData {
	p := stepPayload{RunID: s.RunID, Actor: s.Actor, Kind: s.Kind, Detail: s.Detail}
	if raw, ok := s.Detail.(json.RawMessage); ok && len(raw) == 0 {
		p.Detail = nil
	}
	if err != nil {
		p.Error, p.ErrorClass = err.Error(), errdefs.ClassOf(err)
	}
	return stepData{Actor: logActor(s.Actor), Payload: p}
}

// logStep is the step event of type typ of s, failed with err if not nil.
func logStep(typ string, s engine.Step, err error) (string, runlog.Body, error) {
	body, err := stepLogBody(s, err)
	if err != nil {
		return "", runlog.Body{}, errdefs.Validationf("publish %s: %w", typ, err)
	}
	return typ, body, nil
}

// stepLogBody is stepBody(s, err) written by runlog (runlog.Step), but for
// its detail, encoded by encoding/json; FuzzStateBodies holds the two to
// the same bytes.
func stepLogBody(s engine.Step, err error) (runlog.Body, error) {
	d := stepBody(s, err)
	p := runlog.StepPayload{RunID: d.Payload.RunID, Actor: d.Payload.Actor, Kind: d.Payload.Kind,
		Error: d.Payload.Error, ErrorClass: string(d.Payload.ErrorClass)}
	if d.Payload.Detail != nil {
		detail, err := json.Marshal(d.Payload.Detail)
		if err != nil {
			return runlog.Body{}, err
		}
		p.Detail = detail
	}
	return runlog.Step(d.Actor, p), nil
}

// stepErr is the error of a failed step; a nil one reads as Internal.
func stepErr(e engine.StepFailed) error {
	if e.Err == nil {
		return errdefs.Internalf("step %q failed without an error", e.Actor)
	}
	return e.Err
}

// logActor is an actor as the log names it: one token, '.', '*', '>' and
// ASCII whitespace folded to '_', and "_" for none, so that a graph
// node's "<agent>.node.<id>" reads "<agent>_node_<id>". Actors that need
// no change are returned without allocating.
func logActor(actor string) string {
	if actor == "" {
		return "_"
	}
	// Every folded rune is ASCII, and UTF-8 never uses an ASCII byte
	// inside another rune, so looking at bytes finds exactly them.
	if !strings.ContainsFunc(actor, folded) {
		return actor
	}
	return strings.Map(func(r rune) rune {
		if folded(r) {
			return '_'
		}
		return r
	}, actor)
}

func folded(r rune) bool {
	switch r {
	case '.', '*', '>', ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

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

// messageNS namespaces derived message ids.
var messageNS = uuid.MustParse("6f0b8a4e-2d1c-4b7e-9a53-0c8e5f1d7a21")

// messageID names the i-th message of a run's main channel when the engine
// left it unnamed. The name is stable across checkpoints and resumes, so a
// message is never stored twice.
func messageID(runID string, i int) string {
	return uuid.NewSHA1(messageNS, []byte(runID+"/"+itoa(i))).String()
}
