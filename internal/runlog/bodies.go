package runlog

import (
	"strconv"

	"agentd/internal/model"
	"agentd/internal/run"
)

// Every run writes run.start, status, run.end and its step events; for a
// short run they are most of its events, and encoding/json's reflection
// over their bodies was the largest share of a send's cost
// (docs/benchmarks.md, "The send floor"). So, as Text writes a delta's
// body, these write theirs by hand, in the shapes the runtime's event
// structs have (runtime/events.go): each writes byte for byte what
// encoding/json writes for that struct, which the runtime's
// FuzzStateBodies checks, and a body these cannot write (a status carrying
// a message) is an Entry with a Body for encoding/json.

// EventRunStart, EventStatus and EventRunEnd are the types of the events
// whose bodies the log writes by hand.
const (
	EventRunStart = "run.start"
	EventStatus   = "status"
	EventRunEnd   = "run.end"
)

// stateMembers are the members of a run.start, status or run.end body.
// An entry holds them as they are and the log writes them straight into
// the event's frame: the body has no memory of its own.
type stateMembers struct {
	typ                         string // EventRunStart, EventStatus, EventRunEnd; "" for none
	state                       run.TaskState
	err                         *run.TaskError
	outcome                     string
	usage                       model.TokenUsage
	contextID, agentID, resumed string
	attempt                     int
	continues                   bool
}

// RunStart is a run.start event:
// {"context_id","agent_id","attempt","resumed"?,"continues"?}.
func RunStart(contextID, agentID string, attempt int, resumed string, continues bool) Entry {
	return Entry{Type: EventRunStart, members: stateMembers{typ: EventRunStart,
		contextID: contextID, agentID: agentID, attempt: attempt, resumed: resumed, continues: continues}}
}

// Status is a status event without a message:
// {"state","error"?,"outcome"?}.
func Status(state run.TaskState, err *run.TaskError, outcome string) Entry {
	return Entry{Type: EventStatus, members: stateMembers{typ: EventStatus, state: state, err: err, outcome: outcome}}
}

// RunEnd is a run.end event:
// {"state","error"?,"usage":{…},"outcome"?}.
func RunEnd(state run.TaskState, err *run.TaskError, usage model.TokenUsage, outcome string) Entry {
	return Entry{Type: EventRunEnd, members: stateMembers{typ: EventRunEnd, state: state, err: err, usage: usage, outcome: outcome}}
}

// size is about how many bytes the members take.
func (m *stateMembers) size() int {
	return 120 + len(m.state) + errSize(m.err) + len(m.outcome) + len(m.contextID) + len(m.agentID) + len(m.resumed)
}

// appendTo appends the members, each after a comma.
func (m *stateMembers) appendTo(b []byte) []byte {
	if m.typ == EventRunStart {
		b = append(b, `,"context_id":`...)
		b = appendString(b, m.contextID)
		b = append(b, `,"agent_id":`...)
		b = appendString(b, m.agentID)
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(m.attempt), 10)
		b = appendOmitEmpty(b, `,"resumed":`, m.resumed)
		if m.continues {
			b = append(b, `,"continues":true`...)
		}
		return b
	}
	b = append(b, `,"state":`...)
	b = appendString(b, string(m.state))
	b = appendTaskError(b, m.err)
	if m.typ == EventRunEnd {
		b = append(b, `,"usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, m.usage.InputTokens, 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, m.usage.OutputTokens, 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, m.usage.TotalTokens, 10)
		b = append(b, '}')
	}
	return appendOutcome(b, m.outcome)
}

// StepPayload is a step event's payload; Detail is already encoded by
// encoding/json (nil: none).
type StepPayload struct {
	RunID, Actor, Kind string
	Detail             []byte
	Error, ErrorClass  string
}

// Step is the body of a step event:
// {"actor","payload":{"run_id","actor","kind"?,"detail"?,"error"?,"error_class"?}}.
func Step(actor string, p StepPayload) Body {
	b := make([]byte, 0, 80+len(actor)+len(p.RunID)+len(p.Actor)+len(p.Kind)+len(p.Detail)+len(p.Error)+len(p.ErrorClass))
	b = append(b, `{"actor":`...)
	b = appendString(b, actor)
	b = append(b, `,"payload":{"run_id":`...)
	b = appendString(b, p.RunID)
	b = append(b, `,"actor":`...)
	b = appendString(b, p.Actor)
	b = appendOmitEmpty(b, `,"kind":`, p.Kind)
	if p.Detail != nil {
		b = append(b, `,"detail":`...)
		b = append(b, p.Detail...)
	}
	b = appendOmitEmpty(b, `,"error":`, p.Error)
	b = appendOmitEmpty(b, `,"error_class":`, p.ErrorClass)
	return Body{object: append(b, '}', '}')}
}

// appendTaskError appends `,"error":{"class","message"}` when err is set.
func appendTaskError(b []byte, err *run.TaskError) []byte {
	if err == nil {
		return b
	}
	b = append(b, `,"error":{"class":`...)
	b = appendString(b, err.Class)
	b = append(b, `,"message":`...)
	b = appendString(b, err.Message)
	return append(b, '}')
}

// appendOutcome appends `,"outcome":outcome` unless it is empty.
func appendOutcome(b []byte, outcome string) []byte {
	return appendOmitEmpty(b, `,"outcome":`, outcome)
}

// appendOmitEmpty appends member (`,"name":`) and s unless s is empty.
func appendOmitEmpty(b []byte, member, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, member...), s)
}

// errSize is about how many bytes err adds to a body.
func errSize(err *run.TaskError) int {
	if err == nil {
		return 0
	}
	return 32 + len(err.Class) + len(err.Message)
}
