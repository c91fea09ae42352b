package runtime

import (
	"encoding/json"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/store"
)

// Event data is written by hand, straight into the memory it is kept in
// (see runLog.room): the frame's members, then the body's. The output is
// byte for byte what encoding/json writes for the same values
// (encode_test.go holds the two side by side); bodies of rarer shapes (a
// status with a message, an input prompt, an artifact) are encoded by
// encoding/json and spliced in.

// eventBody is the body of an event on its way into a run's log; the log
// frames it (see frame). It is one of, in this order of precedence:
//   - state: a state event's body that appendStateBody encodes (one
//     stateBody accepts);
//   - actor, key and value: {"actor":actor,key:value}, the fast path of
//     deltas and steps, with actor and key needing no escaping and value
//     a JSON value, spliced without an intermediate buffer;
//   - object: an encoded JSON object (nil: no members).
type eventBody struct {
	state      any
	actor, key string
	value      []byte
	object     []byte
}

// size is about how many bytes the body adds to the frame.
func (e *eventBody) size() int {
	switch {
	case e.state != nil:
		return 160
	case e.key != "":
		return len(`,"actor":"","":}`) + len(e.actor) + len(e.key) + len(e.value)
	}
	return len(e.object)
}

// appendMembers appends the body's members, each after a comma, and the
// closing brace of the event's object.
func (e *eventBody) appendMembers(b []byte) []byte {
	switch {
	case e.state != nil:
		b, _ = appendStateBody(b, e.state)
	case e.key != "":
		b = append(b, `,"actor":"`...)
		b = append(b, e.actor...)
		b = append(b, `","`...)
		b = append(b, e.key...)
		b = append(b, `":`...)
		b = append(b, e.value...)
	case len(e.object) > 2: // more than "{}"
		b = append(b, ',')
		return append(b, e.object[1:]...)
	}
	return append(b, '}')
}

// frameSize is about how many bytes frame appends.
func frameSize(runID, typ string, body *eventBody) int {
	return len(`{"run_id":"","seq":,"type":"","time":""}`) + 20 + len(runID) + len(typ) + len(time.RFC3339Nano) + body.size()
}

// frame builds a store.Event whose Data is run_id, seq, type and time
// followed by the body's members, appended to b (room for it, frameSize).
func frame(b []byte, runID string, seq int64, typ string, at time.Time, body *eventBody) store.Event {
	var head [64]byte
	return frameAfter(b, appendFrameHead(head[:0], runID), runID, seq, typ, at, body)
}

// appendFrameHead appends how every event of run runID starts, up to its
// seq: a run's log quotes its id once rather than once per event.
func appendFrameHead(b []byte, runID string) []byte {
	b = append(b, `{"run_id":`...)
	b = appendQuoted(b, runID)
	return append(b, `,"seq":`...)
}

// frameAfter is frame for a head made by appendFrameHead(runID).
func frameAfter(b, head []byte, runID string, seq int64, typ string, at time.Time, body *eventBody) store.Event {
	b = append(b, head...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"type":`...)
	b = appendQuoted(b, typ)
	b = append(b, `,"time":"`...)
	b = appendTime(b, at)
	b = append(b, '"')
	b = body.appendMembers(b)
	return store.Event{RunID: runID, Seq: seq, Type: typ, Time: at, Data: b}
}

// appendTime appends t in UTC as t.UTC().AppendFormat(b, time.RFC3339Nano)
// does.
func appendTime(b []byte, t time.Time) []byte {
	return model.AppendRFC3339Nano(b, t.UTC())
}

// appendQuoted appends s quoted as strconv.Quote quotes it, as frames
// always carried run ids and types; for the runtime's ids and types that
// is also how encoding/json writes them.
func appendQuoted(b []byte, s string) []byte {
	if model.PlainLen(s) < len(s) {
		return strconv.AppendQuote(b, s)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// stateBody reports whether appendStateBody encodes body.
func stateBody(body any) bool {
	switch v := body.(type) {
	case RunStartData, RunEndData, GapData:
		return true
	case StatusData:
		return v.Message == nil
	}
	return false
}

// appendStateBody appends the members of a state event's body as
// encoding/json would encode the body, each after a comma. It reports
// false, appending nothing, for a body it does not encode (see stateBody).
func appendStateBody(b []byte, body any) ([]byte, bool) {
	switch v := body.(type) {
	case RunStartData:
		b = append(b, `,"context_id":`...)
		b = model.AppendJSONString(b, v.ContextID)
		b = append(b, `,"agent_id":`...)
		b = model.AppendJSONString(b, v.AgentID)
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(v.Attempt), 10)
		if v.Resumed != "" {
			b = append(b, `,"resumed":`...)
			b = model.AppendJSONString(b, v.Resumed)
		}
		if v.Continues {
			b = append(b, `,"continues":true`...)
		}
	case StatusData:
		if v.Message != nil {
			return b, false
		}
		b = appendStateMember(b, v.State)
		b = appendTaskError(b, v.Error)
	case RunEndData:
		b = appendStateMember(b, v.State)
		b = appendTaskError(b, v.Error)
		b = append(b, `,"usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, v.Usage.InputTokens, 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, v.Usage.OutputTokens, 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, v.Usage.TotalTokens, 10)
		b = append(b, '}')
	case GapData:
		b = append(b, `,"pruned_through":`...)
		b = strconv.AppendInt(b, v.PrunedThrough, 10)
	default:
		return b, false
	}
	return b, true
}

func appendStateMember(b []byte, s store.TaskState) []byte {
	b = append(b, `,"state":`...)
	return model.AppendJSONString(b, string(s))
}

// appendTaskError appends an optional "error" member.
func appendTaskError(b []byte, e *store.TaskError) []byte {
	if e == nil {
		return b
	}
	b = append(b, `,"error":{"class":`...)
	b = model.AppendJSONString(b, e.Class)
	b = append(b, `,"message":`...)
	b = model.AppendJSONString(b, e.Message)
	return append(b, '}')
}

// marshalBody encodes a body that appendStateBody does not. Each type is
// marshalled as a copy of its own, so that the caller's body does not
// escape (it is boxed on the stack).
func marshalBody(body any) (json.RawMessage, error) {
	switch v := body.(type) {
	case StatusData:
		return json.Marshal(v)
	case InputData:
		return json.Marshal(v)
	case RunStartData:
		return json.Marshal(v)
	case RunEndData:
		return json.Marshal(v)
	}
	return nil, errdefs.Internalf("no encoding for this event body") // the caller names the event
}
