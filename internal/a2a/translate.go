package a2a

import (
	"encoding/json"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// answerName names the artifacts that carry streamed assistant text.
const answerName = "answer"

// translator turns one run's events into A2A stream updates, one event at a
// time: it never looks at the whole task, so the cost of an event does not
// grow with the run. Each update is derived from exactly one event and
// carries that event's seq (MetaSeq), and the translator's state at seq n
// is the answer open there, which prime (prime.go) recovers from the log
// back to the last answer boundary — so a stream resumed after n emits
// exactly the updates an unbroken stream would have emitted after n.
type translator struct {
	taskID    a2a.TaskID
	contextID string
	// answer is the artifact id of the assistant answer being streamed
	// ("" when none is open).
	answer a2a.ArtifactID
	// sent says this stream's client already has the open answer: a chunk
	// of it went out (now or, for a resumed stream, before the cursor).
	// Until then the next chunk announces the artifact (append false).
	sent bool
	// ended is set by a run.end that left the task terminal or interrupted:
	// the A2A stream closes there.
	ended bool
	// cut is set by the run.end of an attempt that was cut short (its
	// replica died, drained, or lost its lease): the answer it left open
	// stays open, and the attempt that resumes the run continues it.
	cut bool
	// replace says the next text chunk of the open answer replaces it
	// (append false): the attempt that resumed the run streams the answer
	// again from its last checkpoint, and the client must end up with
	// exactly that answer, not the cut-off part followed by the whole.
	replace bool
	body    eventBody
}

// eventBody is the union of the event bodies the translator reads (see
// runtime/events.go); one value is reused for every event.
type eventBody struct {
	State         run.TaskState     `json:"state"`
	Message       *model.Message    `json:"message"`
	Text          string            `json:"text"`
	ToolCall      *model.ToolCall   `json:"tool_call"`
	ToolResult    *model.ToolResult `json:"tool_result"`
	Artifact      model.Artifact    `json:"artifact"`
	Append        bool              `json:"append"`
	LastChunk     bool              `json:"last_chunk"`
	PrunedThrough int64             `json:"pruned_through"`
	// Outcome is a completed status's qualifier ("partial").
	Outcome string `json:"outcome"`
	// Payload is a step event's payload; its error class says whether a
	// step.error was the attempt being cut short.
	Payload struct {
		ErrorClass string `json:"error_class"`
	} `json:"payload"`
}

func newTranslator(t run.Task) *translator {
	return &translator{taskID: a2a.TaskID(t.ID), contextID: t.ContextID}
}

// answerID names the answer whose first text delta is the event at seq:
// seqs are unique within a task, so the id is stable across attempts,
// streams and resumes.
func (x *translator) answerID(seq int64) a2a.ArtifactID {
	return a2a.ArtifactID(x.derivedID(answerName, seq))
}

func (x *translator) decode(ev run.Event) bool {
	x.body = eventBody{}
	return json.Unmarshal(ev.Data, &x.body) == nil
}

// translate advances the state by ev and returns its update, or nil when
// the event has none (run.start, step events, input, submitted status).
func (x *translator) translate(ev run.Event) a2a.Event {
	switch ev.Type {
	case runtime.EventRunStart:
		x.ended = false
		if x.cut {
			// The resumed attempt produces the cut answer again from its
			// checkpoint (replace it), or goes on where it stopped (append).
			x.cut, x.replace = false, x.answer != "" && !continues(ev)
		} else {
			x.answer, x.replace = "", false
		}
	case runtime.EventStatus:
		// The Task that opens every stream already says where the task
		// stands ("submitted" when queued; "working" when it started at once,
		// whose own "working" update then follows, timed), and a task never
		// returns to "submitted".
		if !x.decode(ev) || x.body.State == run.StateSubmitted {
			return nil
		}
		var msg *a2a.Message
		if m := x.body.Message; m != nil {
			msg = toMessage(*m, x.taskID, x.contextID)
			if msg.ID == "" {
				msg.ID = x.derivedID("status", ev.Seq)
			}
		}
		up := x.status(ev, toState(x.body.State), msg)
		if x.body.Outcome != "" {
			up.Metadata[runtime.MetaOutcome] = x.body.Outcome // completed, partially
		}
		return up
	case runtime.EventDelta:
		if !x.decode(ev) {
			return nil
		}
		switch b := &x.body; {
		case b.Text != "":
			if x.answer == "" {
				x.answer, x.sent = x.answerID(ev.Seq), false
			}
			return x.chunk(ev, b.Text, false)
		case b.ToolCall != nil:
			return x.status(ev, a2a.TaskStateWorking, x.toolMessage(ev, model.ToolCallPart(*b.ToolCall)))
		case b.ToolResult != nil:
			return x.status(ev, a2a.TaskStateWorking, x.toolMessage(ev, model.ToolResultPart(*b.ToolResult)))
		}
	case runtime.EventStepComplete:
		return x.closeAnswer(ev)
	case runtime.EventStepError:
		if cutStep(ev) {
			return nil // the attempt is cut short: its answer goes on (see cut)
		}
		return x.closeAnswer(ev)
	case runtime.EventArtifact:
		if x.decode(ev) {
			return x.artifact(ev, toArtifact(x.body.Artifact), x.body.Append, x.body.LastChunk)
		}
	case runtime.EventGap:
		// What was open before the gap is unknown now.
		x.answer, x.cut, x.replace = "", false, false
		if x.decode(ev) {
			// Events follow a gap as a rule: the run is not over because
			// its end was pruned. follow gives the marker the task's own
			// state when nothing follows it (gapEnds).
			up := x.status(ev, a2a.TaskStateWorking, nil)
			up.Metadata[MetaGap] = map[string]any{"prunedThrough": x.body.PrunedThrough}
			return up
		}
	case runtime.EventRunEnd:
		if x.decode(ev) {
			x.ended = x.body.State.Terminal() || x.body.State.Interrupted()
			if x.body.State == run.StateWorking {
				x.cut = true // the run goes on in another attempt
				return nil
			}
		}
		return x.closeAnswer(ev)
	default:
		if isNote(ev.Type) {
			return x.noteUpdate(ev) // a working status whose data part is {"<type>": body}
		}
	}
	return nil
}

// isNote reports whether events of type typ are notes: what the agent does
// (progress, handoffs, effects), told as working status updates.
func isNote(typ string) bool {
	switch typ {
	case runtime.EventProgress, runtime.EventHandoff,
		runtime.EventEffectIntent, runtime.EventEffectResult, runtime.EventEffectDoubt, runtime.EventEffectResolved:
		return true
	}
	return false
}

// statusOnly reports whether events of type typ translate to a status
// update and nothing else, leaving the translator's state as it was: what
// only follows the state or the artifacts (artifacts, prime) skips them
// undecoded.
func statusOnly(typ string) bool {
	return typ == runtime.EventStatus || isNote(typ)
}

// touchesArtifacts reports whether ev may change the artifacts a client
// holds, for what assembles them (artifacts), which skips the other events
// undecoded: status and note events never do, and a run.end does only by
// closing an open answer (whether it ends a stream is no artifact's
// concern, and an attempt cut short with no answer open leaves nothing to
// resume).
func (x *translator) touchesArtifacts(ev run.Event) bool {
	switch {
	case statusOnly(ev.Type):
		return false
	case ev.Type == runtime.EventRunEnd:
		return x.answer != ""
	}
	return true
}

// continues reports whether a run.start opens an attempt that goes on
// from where the cut attempt's output stopped.
func continues(ev run.Event) bool {
	var d runtime.RunStartData
	return json.Unmarshal(ev.Data, &d) == nil && d.Continues
}

// cutStep reports whether ev, a step.error, is a step stopped with its
// attempt (error class aborted: the replica lost the run; interrupted: a
// drain, a cancel, a question to the user) rather than a step that failed.
// Whether its answer is over is then the attempt's run.end to say.
func cutStep(ev run.Event) bool {
	var b eventBody
	if json.Unmarshal(ev.Data, &b) != nil {
		return false
	}
	c := errdefs.Class(b.Payload.ErrorClass)
	return c == errdefs.ClassAborted || c == errdefs.ClassInterrupted
}

// chunk is a chunk of the open answer. The first chunk this stream
// sends of it announces the artifact (append false) even when the answer
// began before the stream did: a client that joined mid-answer has no
// artifact to append to.
//
// The first text of an answer carried over from an attempt cut short
// replaces it (append false): the resumed attempt streams it again.
func (x *translator) chunk(ev run.Event, text string, last bool) *a2a.TaskArtifactUpdateEvent {
	appendTo := x.sent
	if x.replace && text != "" {
		appendTo, x.replace = false, false
	}
	c := &answerChunk{part: a2a.Part{Content: a2a.Text(text)}}
	c.parts[0] = &c.part
	c.artifact = a2a.Artifact{ID: x.answer, Name: answerName, Parts: c.parts[:]}
	up := x.artifact(ev, &c.artifact, appendTo, last)
	x.sent = true
	return up
}

// answerChunk is the artifact of an answer's chunk with its one text part,
// allocated at once: a stream makes one per token.
type answerChunk struct {
	artifact a2a.Artifact
	parts    [1]*a2a.Part
	part     a2a.Part
}

// closeAnswer ends the open answer with an empty lastChunk; the answer's
// text was already sent, and holding chunks back to mark the last one would
// delay every token.
func (x *translator) closeAnswer(ev run.Event) a2a.Event {
	if x.answer == "" {
		return nil
	}
	up := x.chunk(ev, "", true)
	x.answer = ""
	return up
}

func (x *translator) status(ev run.Event, state a2a.TaskState, msg *a2a.Message) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{
		TaskID: x.taskID, ContextID: x.contextID,
		Status:   a2a.TaskStatus{State: state, Message: msg, Timestamp: stamp(ev.Time)},
		Metadata: map[string]any{MetaSeq: ev.Seq},
	}
}

func (x *translator) artifact(ev run.Event, a *a2a.Artifact, appendTo, last bool) *a2a.TaskArtifactUpdateEvent {
	return &a2a.TaskArtifactUpdateEvent{
		TaskID: x.taskID, ContextID: x.contextID, Artifact: a, Append: appendTo, LastChunk: last,
		Metadata: map[string]any{MetaSeq: ev.Seq},
	}
}

// toolMessage wraps a tool call or result in an agent message of a working
// status update: clients see what the agent does without it polluting the
// answer artifact.
func (x *translator) toolMessage(ev run.Event, p model.Part) *a2a.Message {
	return &a2a.Message{
		ID: x.derivedID("tool", ev.Seq), Role: a2a.MessageRoleAgent, TaskID: x.taskID, ContextID: x.contextID,
		Parts: a2a.ContentParts{toPart(p)},
	}
}

// derivedID names something derived from the event at seq: stable across
// streams and resumes.
func (x *translator) derivedID(kind string, seq int64) string {
	return string(x.taskID) + "-" + kind + "-" + strconv.FormatInt(seq, 10)
}
