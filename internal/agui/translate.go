package agui

import (
	"cmp"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// translator turns one AG-UI run — the log events of one agentd run from
// the attempt the AG-UI run opened to the run.end that ends or parks it —
// into AG-UI events. It is deterministic: the same log gives the same
// events with the same ids, which is what lets a reconnect replay a run
// and a Last-Event-ID resume skip exactly what the client has.
type translator struct {
	threadID, runID string
	// snapshot is the thread's transcript at the run's start, sent as
	// MESSAGES_SNAPSHOT right after RUN_STARTED (nil: none).
	snapshot *[]Message
	// pendingTools are frontend tool calls: a run that parks on them
	// finishes as success with pendingToolCallIds.
	started, finished bool
	text              map[string]string // actor → open text message id
	tools             map[string]bool   // open tool call ids
	steps             map[string]bool   // open step names
	reasoning         string            // the open reasoning message's id (reasoning.go)
	state             *runState         // the plan or flow a UI draws
	prompt            *model.Message    // the last input prompt
	schema            json.RawMessage
	// partial is the text of open messages; done_ the run's completed
	// messages (messages.go).
	partial map[string][][]byte // open message id → its text literals
	done_   []shownMsg
}

func newTranslator(threadID, runID string, snapshot *[]Message) *translator {
	if snapshot == nil {
		snapshot = &[]Message{}
	}
	return &translator{threadID: threadID, runID: runID, snapshot: snapshot, partial: map[string][][]byte{},
		text: map[string]string{}, tools: map[string]bool{}, steps: map[string]bool{}}
}

// done reports whether the AG-UI run is over (RUN_FINISHED or RUN_ERROR
// sent).
func (t *translator) done() bool { return t.finished }

// translate returns the AG-UI events of one log event.
func (t *translator) translate(le logEvent) []Event {
	if t.finished {
		return nil
	}
	if !t.started {
		// The run's first event; a replay whose start retention pruned
		// begins with the gap, which follows RUN_STARTED.
		t.started = true
		open := []Event{{Type: RunStarted, ThreadID: t.threadID, RunID: t.runID, ProtocolVersion: ProtocolVersion},
			{Type: MessagesSnapshot, Messages: t.snapshot}}
		if le.Type == runtime.EventRunStart {
			return open
		}
		return append(open, t.translate(le)...)
	}
	if t.reasoning != "" && le.Type != runtime.EventReasoning {
		return append(t.endReasoning(), t.translateEvent(le)...)
	}
	return t.translateEvent(le)
}

// translateEvent is translate past the run's opening and its reasoning.
func (t *translator) translateEvent(le logEvent) []Event {
	switch le.Type {
	case runtime.EventReasoning:
		return t.reasoningDelta(le)
	case runtime.EventRunStart:
		return t.runStart(le)
	case runtime.EventRunEnd:
		return t.runEnd(le)
	case runtime.EventDelta:
		return t.delta(le)
	case runtime.EventStepStart, runtime.EventStepComplete, runtime.EventStepError:
		return t.step(le)
	case runtime.EventPlan:
		return t.plan(le)
	case runtime.EventInput:
		t.prompt, t.schema = le.Prompt, le.Schema
		return nil
	case runtime.EventStatus:
		return nil // RUN_FINISHED / RUN_ERROR say how the run ended
	}
	return []Event{custom(le)}
}

// custom carries an agentd event AG-UI has no event for: CUSTOM named
// "agentd.<type>" with the event's data as value.
func custom(le logEvent) Event {
	return Event{Type: Custom, Name: "agentd." + le.Type, Value: le.raw}
}

func (t *translator) runStart(le logEvent) []Event {
	// A later attempt of the same AG-UI run: recovery on another replica,
	// a retry (messages.go).
	var d runtime.RunStartData
	_ = json.Unmarshal(le.raw, &d)
	return t.recovered(le, d.Continues)
}

func (t *translator) runEnd(le logEvent) []Event {
	if !le.State.Terminal() && !le.State.Interrupted() {
		return []Event{custom(le)} // a retry goes on in the same run
	}
	t.finished = true
	out := t.closeAll()
	fin := Event{Type: RunFinished, ThreadID: t.threadID, RunID: t.runID, Usage: usageOf(le.Usage)}
	switch {
	case le.State == run.StateCompleted:
		fin.Outcome = &Outcome{Type: OutcomeSuccess}
		if le.Outcome != "" {
			fin.Metadata = map[string]any{"outcome": le.Outcome} // a partial workflow
		}
	case le.State == run.StateCanceled:
		fin.Outcome = &Outcome{Type: OutcomeCancelled}
	case le.State.Interrupted():
		fin.Outcome = outcomeOf(le.RunID, t.prompt, t.schema)
	default:
		e := Event{Type: RunError, Code: string(le.State), Message: "the run " + string(le.State), Usage: usageOf(le.Usage)}
		if le.Error != nil {
			e.Message = le.Error.Message
			if le.Error.Class != "" {
				e.Code = le.Error.Class
			}
		}
		return append(out, e)
	}
	return append(out, fin)
}

// closeAll ends every open text message, tool call and step, in a fixed
// order.
func (t *translator) closeAll() []Event { return t.closeOpen(false) }

// closeOpen is closeAll; abandon leaves the open text messages out of the
// run's completed messages.
func (t *translator) closeOpen(abandon bool) []Event {
	var out []Event
	for _, actor := range sortedKeys(t.text) {
		id := t.text[actor]
		out = append(out, Event{Type: TextMessageEnd, MessageID: id})
		delete(t.text, actor)
		if abandon {
			delete(t.partial, id)
		} else {
			t.endText(id)
		}
	}
	for _, id := range sortedKeys(t.tools) {
		out = append(out, Event{Type: ToolCallEnd, ToolCallID: id})
		delete(t.tools, id)
	}
	for _, name := range sortedKeys(t.steps) {
		out = append(out, Event{Type: StepFinished, StepName: name})
		delete(t.steps, name)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (t *translator) delta(le logEvent) []Event {
	switch {
	case le.ToolCall != nil:
		id := ToolCallIDOf(le.RunID, le.ToolCall.ID)
		args := string(le.ToolCall.Arguments)
		if args == "" {
			args = "{}"
		}
		start := Event{Type: ToolCallStart, ToolCallID: id, ToolCallName: le.ToolCall.Name, ParentMessageID: t.text[le.Actor]}
		t.shown(Message{ID: id, Role: "assistant", ToolCalls: []ToolCall{{ID: id, Type: "function", Function: FunctionCall{Name: le.ToolCall.Name, Arguments: args}}}})
		return []Event{start, {Type: ToolCallArgs, ToolCallID: id, Delta: args}, {Type: ToolCallEnd, ToolCallID: id}}
	case le.ToolResult != nil:
		if t.answered(ToolCallIDOf(le.RunID, le.ToolResult.ToolCallID)) {
			return nil // a frontend tool's result: the client's own message has it
		}
		content := le.ToolResult.Content
		res := Event{Type: ToolCallResult, MessageID: le.RunID + "-r" + strconv.FormatInt(le.Seq, 10),
			ToolCallID: ToolCallIDOf(le.RunID, le.ToolResult.ToolCallID), Content: &content, Role: "tool"}
		t.shown(Message{ID: res.MessageID, Role: "tool", Content: text(content), ToolCallID: res.ToolCallID})
		return []Event{res}
	case le.Text == "" && le.textLit == nil:
		return nil
	}
	var out []Event
	id, open := t.text[le.Actor]
	if !open {
		id = le.RunID + "-m" + strconv.FormatInt(le.Seq, 10)
		t.text[le.Actor] = id
		out = append(out, Event{Type: TextMessageStart, MessageID: id, Role: "assistant"})
	}
	lit := le.textLit
	if lit == nil {
		lit, _ = json.Marshal(le.Text)
	}
	t.noteText(id, lit)
	return append(out, Event{Type: TextMessageContent, raw: contentEvent(id, lit)})
}

// ToolCallIDOf is the AG-UI id of agentd run runID's tool call callID:
// unique in the thread, where model call ids repeat from run to run.
func ToolCallIDOf(runID, callID string) string { return runID + "." + callID }

// callIDOf is the agentd call id of an AG-UI tool call id of run runID.
func callIDOf(runID, toolCallID string) (string, bool) {
	return strings.CutPrefix(toolCallID, runID+".")
}

func (t *translator) step(le logEvent) []Event {
	var p stepPayload
	_ = json.Unmarshal(le.Payload, &p)
	name := stepName(le.Actor, p)
	var out []Event
	if le.Type == runtime.EventStepStart {
		if t.steps[name] {
			out = append(out, Event{Type: StepFinished, StepName: name})
		}
		t.steps[name] = true
		out = append(out, Event{Type: StepStarted, StepName: name})
	} else {
		if p.Kind == "model" {
			if id, open := t.text[le.Actor]; open {
				out = append(out, Event{Type: TextMessageEnd, MessageID: id})
				delete(t.text, le.Actor)
				t.endText(id)
			}
		}
		if t.steps[name] {
			delete(t.steps, name)
			out = append(out, Event{Type: StepFinished, StepName: name})
		}
	}
	if d := t.state.step(le.Type, p); d != nil {
		out = append(out, *d)
	} else if p.Kind == "node" && le.Type == runtime.EventStepStart {
		out = append(out, t.flowNode(cmp.Or(p.Detail.Node, le.Actor))...)
	}
	return out
}

// stepName names a step uniquely among the steps open at once: the actor,
// the kind, and the model iteration or the tool call.
func stepName(actor string, p stepPayload) string {
	name := actor + ":" + p.Kind
	switch {
	case p.Detail.CallID != "":
		name += ":" + p.Detail.CallID
	case p.Detail.Iteration > 0:
		name += "#" + strconv.Itoa(p.Detail.Iteration)
	}
	return name
}

// contentEvent encodes TEXT_MESSAGE_CONTENT with the delta's literal as
// the log holds it: no decoding, no reflection on the token path.
func contentEvent(id string, lit []byte) []byte {
	b := make([]byte, 0, 64+len(id)+len(lit))
	b = append(b, `{"type":"TEXT_MESSAGE_CONTENT","messageId":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"delta":`...)
	b = append(b, lit...)
	return append(b, '}')
}

// answered reports whether the thread's snapshot holds the result of tool
// call id already.
func (t *translator) answered(id string) bool {
	for _, m := range *t.snapshot {
		if m.Role == "tool" && m.ToolCallID == id {
			return true
		}
	}
	return false
}

// appendJSONString appends s encoded as a JSON string (a message id).
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
