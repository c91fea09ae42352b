package graph

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"agentd/internal/model"
)

// Mailboxes (zenflow's MessageRouter and MailboxStore): every step of a
// run, and its coordinator, has a mailbox. A message is accepted into the
// recipient's mailbox or dropped with a reason (DropReason); both are
// workflow notes on the run's log ("message_sent", "message_dropped").
// Mailboxes live in the checkpoint payload (state.Mail) and an accepted
// message is checkpointed before its sender learns it was sent, so that a
// run resumed on another replica keeps every undelivered message.
//
// Delivery: a running step's agent receives its messages as user
// messages before its next model turn (the step's host is an
// engine.FeedbackSource); they stay in the mailbox, offered, until the
// step's attempt completes, when they are checkpointed as delivered. A
// step resumed after a crash is offered them again, and its host skips
// those its own checkpoint already holds (by message id): none is lost,
// none reaches the agent twice. A message to a step that completed
// resumes it (resume.go); the coordinator reads its mailbox in its turns
// (coordinator.go).
//
// A message's id is the idempotency key of the tool call that sent it,
// when the call has one: a call replayed after a crash finds its message
// sent already and sends nothing more.

// Coordinator is the mailbox name of the run's coordinator.
const Coordinator = "coordinator"

// DefaultMailboxSize bounds each mailbox's undelivered messages when the
// Config does not.
const DefaultMailboxSize = 16

// DropReason says why a message was not accepted.
type DropReason string

// The drop reasons (zenflow's DropReason values where they apply).
const (
	DropUnknownStep      DropReason = "unknown-step"
	DropMailboxFull      DropReason = "mailbox-full"
	DropTargetTerminal   DropReason = "target-terminal"
	DropWorkflowFinished DropReason = "workflow-finished"
	DropNoCoordinator    DropReason = "no-coordinator"
)

// checkpointMailPrefix is the Step of a checkpoint written after a
// message was sent or taken: "mail:<sender or reader>".
const checkpointMailPrefix = "mail:"

// Message is one message between the steps of a run and its coordinator.
type Message struct {
	ID      string    `json:"id"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Content string    `json:"content"`
	At      time.Time `json:"at"`
}

// mailState is the mailboxes of a run, in the checkpoint payload.
type mailState struct {
	// Boxes holds each recipient's undelivered messages, oldest first.
	Boxes map[string][]Message `json:"boxes,omitempty"`
	// Seen lists the id of every message ever accepted, so that a send
	// replayed after a crash is recognised.
	Seen []string `json:"seen,omitempty"`
	// Replies holds the answers of resumed steps by the id of the message
	// that resumed them.
	Replies map[string]string `json:"replies,omitempty"`
	// Resumes counts the completed resumes of each step.
	Resumes map[string]int `json:"resumes,omitempty"`
	// Transcripts keeps the conversation of each completed agent step, for
	// a message that resumes it.
	Transcripts map[string][]model.Message `json:"transcripts,omitempty"`
	// Coordinator is the coordinator's progress.
	Coordinator coordState `json:"coordinator,omitzero"`
	// Closed: the workflow finished; later messages are dropped.
	Closed bool `json:"closed,omitempty"`
}

// dropError is a send that was dropped; its text is what the sending
// agent reads.
type dropError struct {
	to     string
	reason DropReason
	hint   string
}

func (e *dropError) Error() string {
	s := "dropped: " + string(e.reason) + " (to " + strconv.Quote(e.to) + ")"
	if e.hint != "" {
		s += "; " + e.hint
	}
	return s
}

// send puts a message from from to to in to's mailbox, or drops it. It
// reports whether id was sent before (a replayed call). The caller
// checkpoints.
func (x *execution) send(ctx context.Context, id, from, to, content string) (Message, bool, error) {
	m := Message{ID: id, From: from, To: to, Content: content, At: time.Now().UTC()}
	x.mu.Lock()
	if slices.Contains(x.st.Mail.Seen, id) {
		x.mu.Unlock()
		return m, true, nil
	}
	if err := x.dropReason(m); err != nil {
		x.mu.Unlock()
		x.note(stepOf(from), "message_dropped", map[string]any{"id": id, "from": from, "to": to, "reason": err.reason})
		return m, false, err
	}
	if x.st.Mail.Boxes == nil {
		x.st.Mail.Boxes = map[string][]Message{}
	}
	x.st.Mail.Boxes[to] = append(x.st.Mail.Boxes[to], m)
	x.st.Mail.Seen = append(x.st.Mail.Seen, id)
	x.mu.Unlock()
	if err := x.checkpoint(checkpointMailPrefix + from); err != nil {
		return m, false, err
	}
	kind := "message_sent"
	switch {
	case from == Coordinator:
		kind = "coordinator_message"
	case to == Coordinator:
		kind = "coordinator_inbox_message"
	}
	x.note(stepOf(from), kind, map[string]any{"id": id, "from": from, "to": to, "content": content})
	x.wake(to)
	return m, false, nil
}

// dropReason is why m cannot be accepted, or nil. x.mu is held.
func (x *execution) dropReason(m Message) *dropError {
	switch {
	case x.st.Mail.Closed:
		return &dropError{to: m.To, reason: DropWorkflowFinished}
	case m.To == Coordinator && x.e.coordinator == nil:
		return &dropError{to: m.To, reason: DropNoCoordinator, hint: "this workflow has no coordinator"}
	case m.To != Coordinator && !x.e.hasStep(m.To):
		return &dropError{to: m.To, reason: DropUnknownStep, hint: "steps: " + x.e.stepList()}
	case len(x.st.Mail.Boxes[m.To]) >= x.e.mailboxSize:
		return &dropError{to: m.To, reason: DropMailboxFull, hint: strconv.Itoa(x.e.mailboxSize) + " messages wait there already"}
	}
	if r, ok := x.st.Results[m.To]; ok && (r.Status != StepCompleted || !x.resumable(m.To)) {
		return &dropError{to: m.To, reason: DropTargetTerminal, hint: "the step " + string(r.Status) + " and cannot be resumed"}
	}
	return nil
}

// isDrop reports whether err is a dropped message.
func isDrop(err error) bool {
	var d *dropError
	return errors.As(err, &d)
}

// stepOf is the step id of a sender, "" for the coordinator.
func stepOf(name string) string {
	if name == Coordinator {
		return ""
	}
	return name
}

// pending returns the undelivered messages of mailbox to.
func (x *execution) pending(to string) []Message {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.st.Mail.Boxes[to])
}

// delivered removes the messages with ids from mailbox to: they reached
// their reader. The caller checkpoints.
func (x *execution) delivered(to string, ids []string) {
	if len(ids) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.st.Mail.Boxes[to] = slices.DeleteFunc(x.st.Mail.Boxes[to], func(m Message) bool { return slices.Contains(ids, m.ID) })
	if len(x.st.Mail.Boxes[to]) == 0 {
		delete(x.st.Mail.Boxes, to)
	}
}

// asFeedback is m as the user message a step's agent reads.
func (m Message) asFeedback() model.Message {
	msg := model.NewText(model.RoleUser, "Message from "+m.From+":\n"+m.Content)
	msg.ID, msg.CreatedAt = m.ID, m.At
	msg.Metadata = map[string]any{MetadataMessageFrom: m.From}
	return msg
}

// MetadataMessageFrom marks a user message of a step's conversation that
// is a workflow message, naming its sender.
const MetadataMessageFrom = "agentd.workflow_message_from"

// messageID is the id of a message sent by a tool call: its idempotency
// key when it has one.
func messageID(key string) string {
	if key != "" {
		return "msg-" + key
	}
	return "msg-" + model.NewID()
}
