package runlog

import (
	"encoding/json"
	"strconv"
	"time"
)

// An event's frame (run_id, seq, type, time) is written straight into the
// event's memory, followed by its body's members, with appendString. Bodies come encoded by encoding/json (Object, Encode), or as the
// one shape that carries the bulk of all events, a token delta, written
// here by hand (Text). The output is byte for byte what encoding/json
// writes for the same values: frame_test.go fuzzes the two against each
// other.

// Body is the body of an event on its way into a log; the log frames it.
type Body struct {
	// actor and text: {"actor":actor,"text":text} (Text); text is
	// never empty.
	actor, text string
	// object: an encoded JSON object (nil: no members).
	object []byte
	// members: a state entry's members (Entry), written by hand.
	members *stateMembers
}

// Object is a body already encoded as a JSON object by encoding/json (nil
// or "{}": no members).
func Object(obj []byte) Body { return Body{object: obj} }

// Encode encodes v (a struct or map) with encoding/json as a body.
func Encode(v any) (Body, error) {
	b, err := json.Marshal(v)
	return Body{object: b}, err
}

// Text is the body {"actor":actor,"text":text} of a token delta, most of
// a run's events, written straight into the event's frame; text is not
// empty.
func Text(actor, text string) Body {
	return Body{actor: actor, text: text}
}

// size is about how many bytes the body adds to the frame.
func (e Body) size() int {
	if e.members != nil {
		return e.members.size()
	}
	if e.text != "" {
		return len(`,"actor":"","text":""}`) + len(e.actor) + len(e.text)
	}
	return len(e.object) + 1
}

// appendMembers appends the body's members, each after a comma, and the
// closing brace of the event's object.
func (e Body) appendMembers(b []byte) []byte {
	switch {
	case e.members != nil:
		b = e.members.appendTo(b)
	case e.text != "":
		b = append(b, `,"actor":`...)
		b = appendString(b, e.actor)
		b = append(b, `,"text":`...)
		b = appendString(b, e.text)
	case len(e.object) > 2: // more than "{}"
		b = append(b, ',')
		return append(b, e.object[1:]...)
	}
	return append(b, '}')
}

// frameSize is about how many bytes a frame takes.
func frameSize(runID, typ string, body Body) int {
	return len(`{"run_id":"","seq":,"type":"","time":""}`) + 20 + len(runID) + len(typ) + len(time.RFC3339Nano) + body.size()
}

// appendFrameHead appends how every event of run runID starts, up to its
// seq: a log quotes its run's id once rather than once per event.
func appendFrameHead(b []byte, runID string) []byte {
	b = append(b, `{"run_id":`...)
	b = appendString(b, runID)
	return append(b, `,"seq":`...)
}

// frameAfter appends an event's data to b: head (appendFrameHead), then
// seq, type, time and the body's members.
func frameAfter(b, head []byte, seq int64, typ string, at time.Time, body Body) []byte {
	b = append(b, head...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"time":"`...)
	b = appendTime(b, at)
	b = append(b, '"')
	return body.appendMembers(b)
}

// frame is an event's data for a run of id runID.
func frame(runID string, seq int64, typ string, at time.Time, body Body) []byte {
	return frameAfter(make([]byte, 0, frameSize(runID, typ, body)), appendFrameHead(nil, runID), seq, typ, at, body)
}

// JSON returns the body as the JSON object it stands for.
func (e Body) JSON() []byte {
	m := e.appendMembers(nil) // ",members}" or "}"
	if len(m) == 1 {
		return []byte("{}")
	}
	return append([]byte{'{'}, m[1:]...)
}

// JSON returns the entry's body as the log writes it.
func (e Entry) JSON() ([]byte, error) {
	if e.members.typ != "" {
		return Body{members: &e.members}.JSON(), nil
	}
	b, err := Encode(e.Body)
	return b.JSON(), err
}
