package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/google/uuid"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
)

// Signals steer a run: pause, resume, feedback, retry and cancel (Signal).
//
// A pause is delivered at the run's next safe boundary: right after the
// engine's next checkpoint (host.Checkpoint arms it), when the engine asks
// (engine.PauseRequested, host.PauseNow) before its next step — never mid
// model turn or mid tool call; only engine.PauseAware engines (the loop)
// can be paused. The attempt
// then ends input-required, its status message saying it was paused (a
// data part {"paused": {…}}, PausedKey), with no goroutine and no lease,
// exactly like a run parked for input; it survives restarts and
// takeovers, since the task and its checkpoint are in the store. REST
// shows such a run as "paused"; A2A as input-required with that message.
// A checkpoint the engine writes before asking the user (an approval) is
// no boundary to pause at: the run parks for the question instead.
//
// resume continues a paused run from its checkpoint, on any replica, in a
// new attempt (run.start resumed "resume"); a message to a paused task
// (A2A, POST /v1/runs/{id}/input) resumes it too, and is its feedback.
//
// feedback is a user message the engine takes before its next model turn
// (engine.FeedbackSource); it is held by the replica running the run until
// then. Feedback to a paused run resumes it with the feedback; feedback
// left untaken when a run pauses is kept in the paused status and given to
// the resumed attempt; when a run ends with feedback untaken, it goes to
// the context's transcript (the next run of the context reads it).
//
// retry starts a new attempt of a failed run from its latest checkpoint
// (run.start resumed "retry").
//
// Every accepted signal is a "signal" event in the run's log: appended
// live when the run executes here, or written with the state change it
// makes (the run.start of a resumed attempt). A refused signal writes
// nothing. A pause or feedback for a run executing on another replica is
// recorded on the task and relayed to that replica by its lease renewal
// round (signals_relay.go), as a cancel is; only a run not started yet
// (queued) refuses them, with a Conflict naming the reason.

// The signal types.
const (
	SignalPause    = "pause"
	SignalResume   = "resume"
	SignalFeedback = "feedback"
	SignalRetry    = "retry"
	SignalCancel   = "cancel"
)

// EventSignal is the type of the event that records a signal.
const EventSignal = "signal"

// PausedKey names the member of the paused status message's data part.
const PausedKey = "paused"

// Signal is a user's request to steer a run.
type Signal struct {
	Type string
	// Text is the feedback (required for feedback) or a note (pause).
	Text string
}

// SignalData is the body of a signal event: the signal's type (the
// event's own "type" member is "signal") and text.
type SignalData struct {
	Signal string `json:"signal"`
	Text   string `json:"text,omitempty"`
}

func signalData(s Signal) SignalData { return SignalData{Signal: s.Type, Text: s.Text} }

// PausedData is the data part of a paused run's status message.
type PausedData struct {
	Reason string `json:"reason,omitempty"`
	// Feedback is the feedback sent while the run paused, not yet taken;
	// the attempt that resumes the run takes it first.
	Feedback []string `json:"feedback,omitempty"`
}

// steering holds the signals an executing attempt has not acted on yet.
// Its mu is a leaf lock: nothing else is locked while it is held.
type steering struct {
	mu sync.Mutex
	// pause is asked for; armed once a checkpoint was written after that.
	pause, armed bool
	pauseNote    string
	feedback     []model.Message
	// relay tracks the signals stored on the task (signals_relay.go).
	relay relayed
	// ready is set once the attempt knows what the checkpoint it resumes
	// from holds (startSteering): stored signals are handed on only then.
	ready bool
}

// Signal applies s to task taskID (see the comment above). It returns the
// task as it stands after the signal: working, paused or as the signal
// left it. An unknown type or a feedback without text is a Validation
// error naming the field; a signal that does not apply to the run's state
// is a Conflict saying why.
func (r *Runtime) Signal(ctx context.Context, taskID string, s Signal) (run.Task, error) {
	switch s.Type {
	case SignalPause, SignalResume, SignalRetry, SignalCancel:
	case SignalFeedback:
		if strings.TrimSpace(s.Text) == "" {
			return run.Task{}, errdefs.WithField("text", errdefs.Validationf("a feedback signal needs a non-empty text"))
		}
	default:
		return run.Task{}, errdefs.WithField("type", errdefs.Validationf("unknown signal type %q (want pause, resume, feedback, retry or cancel)", s.Type))
	}
	t, err := r.st.GetTask(ctx, taskID)
	if err != nil {
		return run.Task{}, err
	}
	switch s.Type {
	case SignalPause:
		return r.pauseTo(ctx, t, s, false)
	case SignalResume:
		return r.resume(ctx, t, s)
	case SignalFeedback:
		return r.feedbackTo(ctx, t, s, false)
	case SignalRetry:
		return r.retryFailed(ctx, t, s)
	}
	if x := r.executing(t.ID); x != nil {
		x.logSignal(s)
	}
	return r.Cancel(ctx, t.ID)
}

// Paused reports whether task t waits because a user paused it.
func Paused(t run.Task) bool {
	_, ok := pausedData(t)
	return ok
}

// pausedData returns the paused part of t's status message.
func pausedData(t run.Task) (PausedData, bool) {
	if t.State != run.StateInputRequired || t.StatusMessage == nil {
		return PausedData{}, false
	}
	for _, p := range t.StatusMessage.Parts {
		if p.Type != model.PartData {
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(p.Data, &obj) != nil || obj[PausedKey] == nil {
			continue
		}
		var d PausedData
		if json.Unmarshal(obj[PausedKey], &d) == nil {
			return d, true
		}
	}
	return PausedData{}, false
}

// pauseTo asks the run to pause at its next checkpoint: directly when it
// executes here, else through the store (recordSignal; again says this
// is a second look).
func (r *Runtime) pauseTo(ctx context.Context, t run.Task, s Signal, again bool) (run.Task, error) {
	if err := notRunning(t, s.Type); err != nil {
		return run.Task{}, err
	}
	a, err := r.Agent(t.AgentID)
	if err != nil {
		return run.Task{}, err
	}
	if !engine.Pausable(a.Engine) || !engine.CapabilitiesOf(a.Engine).SupportsResume {
		return run.Task{}, errdefs.Conflictf("agent %s cannot be paused: its engine does not stop and resume at checkpoints; cancel the run instead", a.ID)
	}
	x := r.executing(t.ID)
	if x == nil {
		if t.State == run.StateWorking {
			return r.recordSignal(ctx, t, s, again)
		}
		return run.Task{}, notHere(t, s.Type)
	}
	x.steer.mu.Lock()
	x.steer.pause, x.steer.pauseNote = true, s.Text
	x.steer.mu.Unlock()
	x.logSignal(s)
	return t, nil
}

// resume continues a paused run, or withdraws a pause not delivered yet.
func (r *Runtime) resume(ctx context.Context, t run.Task, s Signal) (run.Task, error) {
	if x := r.executing(t.ID); x != nil && t.State == run.StateWorking {
		x.steer.mu.Lock()
		pending := x.steer.pause
		x.steer.pause, x.steer.armed = false, false
		x.steer.mu.Unlock()
		if pending {
			x.logSignal(s)
			return t, nil
		}
	}
	if t.State == run.StateWorking && r.executing(t.ID) == nil {
		// A pause recorded for another replica, not delivered yet.
		next, withdrawn, err := r.withdrawPause(ctx, t)
		if err != nil || withdrawn {
			return next, err
		}
	}
	if !Paused(t) {
		return run.Task{}, errdefs.Conflictf("task %s is %s, not paused: only a paused run can be resumed", t.ID, t.State)
	}
	return r.resumePaused(ctx, t, s)
}

// feedbackTo hands a message to the run: directly when it executes here,
// else through the store (recordSignal); a paused run resumes with it.
func (r *Runtime) feedbackTo(ctx context.Context, t run.Task, s Signal, again bool) (run.Task, error) {
	if Paused(t) {
		return r.resumePaused(ctx, t, s)
	}
	if err := notRunning(t, s.Type); err != nil {
		return run.Task{}, err
	}
	x := r.executing(t.ID)
	if x == nil {
		if t.State == run.StateWorking {
			return r.recordSignal(ctx, t, s, again)
		}
		return run.Task{}, notHere(t, s.Type)
	}
	x.steer.mu.Lock()
	x.steer.feedback = append(x.steer.feedback, feedbackMessage(s.Text))
	x.steer.mu.Unlock()
	x.logSignal(s)
	return t, nil
}

// resumePaused resumes paused task t in a new attempt, which takes the
// feedback kept in its paused status and the signal's own first.
func (r *Runtime) resumePaused(ctx context.Context, t run.Task, s Signal) (run.Task, error) {
	a, err := r.Agent(t.AgentID)
	if err != nil {
		return run.Task{}, err
	}
	kept, _ := pausedData(t)
	texts := kept.Feedback
	if s.Type == SignalFeedback {
		texts = append(texts, s.Text)
	}
	return r.resumeFrom(ctx, a, t, engine.SignalResume, func(x *execution) []runlog.Entry {
		for _, text := range texts {
			x.steer.feedback = append(x.steer.feedback, feedbackMessage(text))
		}
		return []runlog.Entry{signalEvent(signalData(s))}
	})
}

// retryFailed starts a new attempt of failed task t from its latest
// checkpoint.
func (r *Runtime) retryFailed(ctx context.Context, t run.Task, s Signal) (run.Task, error) {
	if t.State != run.StateFailed {
		return run.Task{}, errdefs.Conflictf("task %s is %s: only a failed run can be retried", t.ID, t.State)
	}
	a, err := r.Agent(t.AgentID)
	if err != nil {
		return run.Task{}, err
	}
	if !engine.CapabilitiesOf(a.Engine).SupportsResume {
		return run.Task{}, errdefs.Conflictf("task %s cannot be retried: agent %s's engine does not resume from checkpoints", t.ID, a.ID)
	}
	cp, err := r.st.LoadCheckpoint(ctx, t.ID)
	if err != nil {
		return run.Task{}, err
	}
	if cp == nil {
		return run.Task{}, errdefs.Conflictf("task %s cannot be retried: it failed before its first checkpoint, so there is nothing to retry from; send the message again", t.ID)
	}
	return r.resumeFrom(ctx, a, t, engine.SignalRetry, func(*execution) []runlog.Entry {
		return []runlog.Entry{signalEvent(signalData(s))}
	})
}

// notRunning refuses a signal for a run that is not running: finished, or
// waiting (paused, or for an answer).
func notRunning(t run.Task, typ string) error {
	switch {
	case t.State.Terminal():
		return errdefs.Conflictf("task %s is %s: a finished run cannot take a %s signal", t.ID, t.State, typ)
	case Paused(t) && typ == SignalPause:
		return errdefs.Conflictf("task %s is paused already", t.ID)
	case t.State.Interrupted():
		return errdefs.Conflictf("task %s is %s, waiting for an answer: answer it with POST /v1/runs/%s/input, or cancel it", t.ID, t.State, t.ID)
	}
	return nil
}

// notHere refuses a signal for a run that is not executing on this
// replica.
func notHere(t run.Task, typ string) error {
	return errdefs.Conflictf("task %s is %s but not executing on this replica: a %s signal reaches only the replica that runs it; try again in a moment", t.ID, t.State, typ)
}

// executing returns the attempt of task id executing here: launched and
// stored. A queued attempt is not one yet.
func (r *Runtime) executing(id string) *execution {
	r.mu.Lock()
	x := r.runs[id]
	launched := x != nil && x.launched
	r.mu.Unlock()
	if !launched {
		return nil
	}
	select {
	case <-x.created:
		if x.createErr == nil {
			return x
		}
	default:
	}
	return nil
}

// feedbackMessage is a feedback text as the user message the engine
// reads, with an id of its own.
func feedbackMessage(text string) model.Message {
	m := model.NewText(model.RoleUser, text)
	m.ID = uuid.NewString()
	m.CreatedAt = storedNow()
	return m
}

// logSignal appends the signal's event to the attempt's live log.
func (x *execution) logSignal(s Signal) {
	body, err := encodeBody(signalData(s))
	if err != nil {
		return
	}
	x.log.Append(EventSignal, runlog.Object(body))
}

// pauseAtBoundary arms a requested pause: the engine has just written a
// checkpoint, which the paused run will resume from.
func (x *execution) pauseAtBoundary() {
	x.steer.mu.Lock()
	x.steer.armed = x.steer.pause
	x.steer.mu.Unlock()
}

// PauseNow delivers an armed pause to the engine (engine.Pauser). A run
// stopping for another reason is left to stop so.
func (h *host) PauseNow() (engine.Interrupt, bool) {
	x := h.x
	x.steer.mu.Lock()
	armed, note := x.steer.armed, x.steer.pauseNote
	if armed {
		x.steer.pause, x.steer.armed = false, false
	}
	x.steer.mu.Unlock()
	if !armed {
		return engine.Interrupt{}, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cancelCause != "" {
		return engine.Interrupt{}, false
	}
	x.cancelCause, x.cancelNote = engine.CausePause, note
	return engine.Interrupt{Cause: engine.CausePause, Detail: note}, true
}

// pausedOutcome is the outcome of an attempt that stopped for a pause:
// input-required, its status message saying so and keeping the feedback
// not taken yet. ok is false when the engine ended for another reason.
func (x *execution) pausedOutcome(res *agent.Result) (outcome, bool) {
	if res == nil || res.Status != agent.StatusInterrupted {
		return outcome{}, false
	}
	d := PausedData{Reason: x.cancelNoteNow()}
	for _, m := range x.takeSteeredFeedback() {
		d.Feedback = append(d.Feedback, m.Text())
	}
	data, err := model.DataPart(map[string]PausedData{PausedKey: d})
	if err != nil {
		return outcome{}, false
	}
	text := "Paused by the user"
	if d.Reason != "" {
		text += " (" + d.Reason + ")"
	}
	text += ". Send a resume signal to continue, or a feedback signal (or a message) to continue with it."
	msg := model.Message{Role: model.RoleAssistant, Name: x.agent.ID, Parts: []model.Part{model.TextPart(text), data}}
	return outcome{state: run.StateInputRequired, status: &msg, keep: true, said: true}, true
}

// cancelNoteNow returns the note of the attempt's stop request.
func (x *execution) cancelNoteNow() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.cancelNote
}

// takeSteeredFeedback takes the feedback signals not handed out yet.
func (x *execution) takeSteeredFeedback() []model.Message {
	x.steer.mu.Lock()
	defer x.steer.mu.Unlock()
	out := x.steer.feedback
	x.steer.feedback = nil
	x.markGone(out)
	return out
}

// leftoverFeedback is the feedback an attempt that did not pause left
// untaken, as transcript messages of the run: the context keeps it.
func (x *execution) leftoverFeedback(o outcome) []run.Message {
	if o.state == run.StateInputRequired && o.prompt == nil {
		return nil // paused: the status keeps it for the resumed attempt
	}
	var out []run.Message
	for _, m := range x.takeSteeredFeedback() {
		out = append(out, run.Message{ContextID: x.contextID, TaskID: x.runID, Message: m})
	}
	return out
}

// TakeFeedback hands the engine the feedback sent while the run executed
// (engine.FeedbackSource), oldest first; and, first of all, the message
// that resumed the attempt when the engine did not ask for it — a message
// to a paused run, which is its feedback. That message is in the
// transcript already, under its id.
func (h *host) TakeFeedback() []model.Message {
	var out []model.Message
	h.mu.Lock()
	if h.reply != nil && h.x.resume == engine.SignalInput {
		h.reply = nil
		out = append(out, h.x.user[0].Message)
	}
	h.mu.Unlock()
	return append(out, h.x.takeSteeredFeedback()...)
}
