package remote

import (
	"context"
	"errors"
	"iter"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/calltree"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// maxReattach bounds how often one attempt re-subscribes after the
// peer's stream broke off before the task ended.
const maxReattach = 3

// stream is what a2a-go's client returns for streaming calls.
type stream = iter.Seq2[a2a.Event, error]

// attempt is one Execute's working state.
type attempt struct {
	e     *Engine
	ctx   context.Context
	run   engine.Run
	host  engine.Host
	board *engine.Board
	st    state

	peer *peer
	// saves writes the attempt's checkpoints (saver).
	saves *saver
	// reached says the peer answered this attempt (the breaker knows).
	reached bool
	// snapshot says the next Task event is a snapshot whose answer text
	// is compared with st.Text (a re-attachment without a cursor).
	snapshot bool
	// answered says the stream is the one the user's answer opened: a
	// Task that opens it may still show the question just answered (the
	// @a2a-js/sdk server sends the stored task before it runs the turn),
	// which is no new question.
	answered bool
	// known is closed once the peer task's id is known (see
	// watchInterrupts); knownOnce closes it.
	known     chan struct{}
	knownOnce sync.Once
}

// markKnown records that the peer task's id is known.
func (x *attempt) markKnown() { x.knownOnce.Do(func() { close(x.known) }) }

// errStreamCut says the peer's stream ended before its task did.
var errStreamCut = errors.New("the peer's stream ended before its task")

func (x *attempt) execute() (err error) {
	p, err := x.e.connect(x.ctx)
	if err != nil {
		return err
	}
	defer func() { _ = p.client.Destroy() }()
	x.peer = p
	if rc, ok := engine.ResumeContextFromContext(x.ctx); ok && rc.Signal == engine.SignalCancel {
		// Canceled while parked on the peer's question: the interrupt is
		// pending; the peer task is canceled too.
		x.cancelPeer()
		return engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserCancel, Detail: "canceled while waiting for input"})
	}

	x.saves = newSaver(x.host)
	x.saves.start(x.ctx)
	defer func() {
		if serr := x.saves.stop(); err == nil && serr != nil {
			err = serr
		}
	}()
	ctx, stopWatch := x.watchInterrupts()
	events, err := x.open(ctx)
	for cuts := 0; err == nil && events != nil; {
		events, err = x.consume(ctx, events)
		if errors.Is(err, errStreamCut) && cuts < maxReattach && ctx.Err() == nil {
			cuts++
			if err = x.pause(ctx, time.Duration(cuts)*100*time.Millisecond); err == nil {
				events = x.reattach(ctx)
			}
		}
	}
	if intr := stopWatch(); intr != nil {
		if intr.Cause == engine.CauseUserCancel {
			x.cancelPeer()
		}
		return engine.Interrupted(*intr)
	}
	if errors.Is(err, errStreamCut) {
		return errdefs.Public(errdefs.NotAvailablef("%s: task %s: %v", x.e.cfg.peerName(), x.st.TaskID, err))
	}
	return err
}

// open starts the attempt's stream: the user's answer when the peer
// asked, a re-attachment when the peer task is known, else a new task.
func (x *attempt) open(ctx context.Context) (stream, error) {
	switch {
	case x.st.Asked != nil:
		return x.ask(ctx)
	case x.st.TaskID != "":
		return x.reattach(ctx), nil
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, toPeer(x.userParts())...)
	msg.Metadata = calltree.Outgoing(ctx)
	if key := x.effectKey(); key != "" {
		// A peer tool's call: the same message, in the same context, on
		// every attempt, so that the peer starts one task for it.
		msg.ID, msg.ContextID = key, effectContext(key)
	}
	return x.peer.client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}), nil
}

// EffectKeyMetadata is the user message metadata member by which a peer
// tool hands its call's effect key to the attempt (tool.go).
const EffectKeyMetadata = "agentd.effect_key"

// effectKey is the effect key of the peer tool's call this attempt runs,
// if any.
func (x *attempt) effectKey() string {
	msgs := x.board.Channel(engine.MainChannel)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			key, _ := msgs[i].Metadata[EffectKeyMetadata].(string)
			return key
		}
	}
	return ""
}

func (x *attempt) userParts() []model.Part {
	msgs := x.board.Channel(engine.MainChannel)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return msgs[i].Parts
		}
	}
	return nil
}

// consume forwards the peer's updates into the run until the task ends
// (nil, nil), the peer asks and the user answers inline (the follow-up
// stream), or the stream fails.
func (x *attempt) consume(ctx context.Context, events stream) (stream, error) {
	for ev, err := range events {
		if err != nil {
			return nil, x.streamError(ctx, err)
		}
		if !x.reached {
			x.reached = true
			x.e.breaker.record(nil)
		}
		next, done, err := x.apply(ctx, ev)
		if err != nil || done {
			return next, err
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errStreamCut
}

// apply forwards one update; done says the stream has served its purpose.
func (x *attempt) apply(ctx context.Context, ev a2a.Event) (next stream, done bool, err error) {
	answered := x.answered
	x.answered = false
	switch v := ev.(type) {
	case *a2a.Message:
		text := messageText(v)
		if err := x.token(text); err != nil {
			return nil, true, err
		}
		return nil, true, x.complete("")
	case *a2a.Task:
		if answered && asks(v.Status.State) {
			x.markKnown()
			return nil, false, nil // the question just answered
		}
		return x.onTask(ctx, v)
	case *a2a.TaskArtifactUpdateEvent:
		x.noteSeq(v.Metadata)
		return nil, false, x.onArtifact(v)
	case *a2a.TaskStatusUpdateEvent:
		x.noteSeq(v.Metadata)
		return x.onStatus(ctx, v.Status)
	}
	return nil, false, nil
}

func (x *attempt) onTask(ctx context.Context, t *a2a.Task) (stream, bool, error) {
	if x.st.TaskID == "" {
		x.st.TaskID, x.st.ContextID = string(t.ID), t.ContextID
		if err := x.checkpoint(stepTask); err != nil {
			return nil, true, err
		}
	}
	x.markKnown()
	if x.snapshot {
		x.snapshot = false
		if err := x.catchUp(t); err != nil {
			return nil, true, err
		}
	}
	return x.onStatus(ctx, t.Status)
}

// onStatus acts on the peer task's state: a question is asked, an end
// ends the attempt; working states carry on.
func (x *attempt) onStatus(ctx context.Context, s a2a.TaskStatus) (stream, bool, error) {
	switch s.State {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		parts := fromPeer(messageParts(s.Message))
		if len(parts) == 0 {
			parts = []model.Part{model.TextPart("The peer agent asks for more input.")}
		}
		x.st.Asked = &question{Parts: parts, Auth: s.State == a2a.TaskStateAuthRequired}
		x.st.Answer = ""
		if err := x.checkpoint(stepAsk); err != nil {
			return nil, true, err
		}
		next, err := x.ask(ctx)
		return next, true, err
	case a2a.TaskStateCompleted:
		if _, err := x.reportPeerUsage(ctx); err != nil {
			return nil, true, err
		}
		return nil, true, x.complete(messageText(s.Message))
	case a2a.TaskStateFailed:
		class, _ := x.reportPeerUsage(ctx) // the run fails anyway; its tokens still count
		return nil, true, peerFailed(class, "%s: task %s failed: %s", x.e.cfg.peerName(), x.st.TaskID, orUnknown(messageText(s.Message)))
	case a2a.TaskStateRejected:
		return nil, true, errdefs.Validationf("%s rejected the task: %s", x.e.cfg.peerName(), orUnknown(messageText(s.Message)))
	case a2a.TaskStateCanceled:
		return nil, true, errdefs.Abortedf("%s: task %s was canceled by the peer: %s", x.e.cfg.peerName(), x.st.TaskID, orUnknown(messageText(s.Message)))
	}
	return nil, false, nil
}

// ask relays the peer's question to the user. agentd's host parks the
// run here (AskUser answers with an interrupt) and the next attempt,
// resumed from the stepAsk checkpoint, receives the answer from the same
// call; hosts that answer inline continue at once.
func (x *attempt) ask(ctx context.Context) (stream, error) {
	q := x.st.Asked
	reply, err := x.host.AskUser(x.ctx, engine.UserPrompt{Parts: q.Parts, Auth: q.Auth, Source: x.e.cfg.AgentID + ":peer"})
	if err != nil {
		return nil, err
	}
	x.st.Asked = nil
	x.answered = true
	msg := a2a.NewMessage(a2a.MessageRoleUser, toPeer(reply.Parts)...)
	msg.TaskID, msg.ContextID = a2a.TaskID(x.st.TaskID), x.st.ContextID
	msg.Metadata = calltree.Outgoing(ctx)
	if len(msg.Parts) == 0 {
		msg.Parts = a2a.ContentParts{a2a.NewTextPart("")}
	}
	return x.peer.client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}), nil
}

// onArtifact forwards an artifact update: text-only chunks are the
// peer's answer and become token deltas; anything else becomes an
// artifact of the run, chunking kept.
func (x *attempt) onArtifact(v *a2a.TaskArtifactUpdateEvent) error {
	if v.Artifact == nil {
		return nil
	}
	if text, ok := textOnly(v.Artifact.Parts); ok {
		return x.token(text)
	}
	parts := fromPeer(v.Artifact.Parts)
	if len(parts) == 0 {
		return nil
	}
	a := model.Artifact{ID: x.run.ID + "-" + string(v.Artifact.ID), Name: v.Artifact.Name, Parts: parts}
	return x.forward(x.st, func(pub engine.Publisher) error {
		return pub.Publish(x.ctx, engine.ArtifactUpdate{Artifact: a, Append: v.Append, LastChunk: v.LastChunk})
	})
}

// token forwards answer text and records it in the checkpoint.
func (x *attempt) token(text string) error {
	if text == "" {
		return nil
	}
	next := x.st
	next.Text += text
	next.Answer += text
	return x.forward(next, func(pub engine.Publisher) error {
		return pub.Publish(x.ctx, engine.Token{Actor: x.e.cfg.AgentID, Text: text})
	})
}

// complete ends the run with the answer: the text streamed since the
// last question, else the text of the peer's final status message
// (streamed as one token so that streams carry it too).
func (x *attempt) complete(final string) error {
	if x.st.Answer == "" && final != "" {
		if err := x.token(final); err != nil {
			return err
		}
	}
	x.board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, x.st.Answer))
	return nil
}

func (x *attempt) streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	cerr := classifyCall(ctx, "peer "+x.e.cfg.Peer, err)
	x.e.breaker.record(cerr)
	if x.st.TaskID != "" && errdefs.IsNotAvailable(cerr) && !errors.Is(err, a2a.ErrInternalError) {
		return errStreamCut // the task lives on the peer: re-attach
	}
	return publicIfUnreachable(cerr)
}

// pause waits d unless ctx ends first.
func (x *attempt) pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func messageParts(m *a2a.Message) []*a2a.Part {
	if m == nil {
		return nil
	}
	return m.Parts
}

func orUnknown(s string) string {
	if s == "" {
		return "(no reason given)"
	}
	return s
}
