package memstore

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/store"
)

// Tasks, transcript messages and checkpoints — most of what a finished
// run leaves behind — are kept as records: values encoded into one string
// each. The garbage collector does not look inside a string, so a record
// costs it one pointer however many strings, parts and maps the value
// holds, where the decoded value costs it dozens; and reading one back is
// cheap, for its strings are substrings of the record.
//
// The put* functions append a value to a record, the reader methods
// return the next value of one. The format is private to a Store and
// never leaves the process: lengths and counts are uvarints; a byte slice,
// slice or map that may be nil stores 0 for nil and its length plus one
// otherwise, so that nil and empty stay apart as they are in the value
// given; a pointer that may be nil is preceded by a presence flag.

func putUint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func putInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func putString(b []byte, s string) []byte {
	return append(putUint(b, uint64(len(s))), s...)
}

// putBytes appends p, keeping nil apart from empty.
func putBytes(b []byte, p []byte) []byte {
	if p == nil {
		return putUint(b, 0)
	}
	return append(putUint(b, uint64(len(p))+1), p...)
}

// How putTime writes a time: a tag, then (timeMicros) Unix microseconds
// as 8 bytes, little-endian, or (timeOther) nanoseconds and Unix seconds
// as varints.
const (
	timeZero byte = iota
	timeMicros
	timeOther
)

// Unix seconds whose microseconds fit an int64: some 292,000 years around
// 1970.
const maxMicrosSec = math.MaxInt64/int64(time.Second/time.Microsecond) - 1

// putTime appends t, which is in UTC; the zero time stays zero. Stored
// times are at microsecond precision and mostly within maxMicrosSec of
// 1970, and these take 9 bytes written and read without a varint loop;
// any other time is kept exactly too.
func putTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, timeZero)
	}
	sec, ns := t.Unix(), t.Nanosecond()
	if ns%int(time.Microsecond) == 0 && -maxMicrosSec <= sec && sec <= maxMicrosSec {
		return binary.LittleEndian.AppendUint64(append(b, timeMicros), uint64(t.UnixMicro()))
	}
	return putInt(putUint(append(b, timeOther), uint64(ns)), sec)
}

// The kinds of a decoded JSON value (putValue).
const (
	jsonNull byte = iota
	jsonFalse
	jsonTrue
	jsonNumber
	jsonString
	jsonObject
	jsonArray
)

// putMap appends a map of decoded JSON values (a normalised one: see
// inJSONMap), keeping nil apart from empty.
func putMap(b []byte, m map[string]any) []byte {
	if m == nil {
		return putUint(b, 0)
	}
	b = putUint(b, uint64(len(m))+1)
	for k, v := range m {
		b = putValue(putString(b, k), v)
	}
	return b
}

// putValue appends a decoded JSON value. Values of any other type do not
// occur in a normalised map.
func putValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, jsonNull)
	case bool:
		if v {
			return append(b, jsonTrue)
		}
		return append(b, jsonFalse)
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, jsonNumber), math.Float64bits(v))
	case string:
		return putString(append(b, jsonString), v)
	case map[string]any:
		return putMap(append(b, jsonObject), v)
	case []any:
		b = putUint(append(b, jsonArray), uint64(len(v)))
		for _, e := range v {
			b = putValue(b, e)
		}
		return b
	}
	panic("memstore: not a decoded JSON value")
}

// putJSONMap normalises m as inJSONMap does and appends it.
func putJSONMap(b []byte, m map[string]any, field fieldName) ([]byte, error) {
	switch {
	case m == nil:
		return putUint(b, 0), nil
	case len(m) == 0:
		return putUint(b, 1), nil
	}
	if !store.Flat(m) {
		var err error
		if m, err = inJSONMap(m, field); err != nil {
			return b, err
		}
	}
	// Encoded apart: the encoding recurses, and escape analysis then moves
	// every buffer given to it to the heap, b (often on the caller's
	// stack) included.
	return append(b, putMap(nil, m)...), nil
}

// putRaw validates an optional raw JSON value and appends it; an empty one
// is stored as nil, as inRaw does.
func putRaw(b []byte, raw []byte, field fieldName) ([]byte, error) {
	if len(raw) == 0 {
		return putBytes(b, nil), nil
	}
	if !json.Valid(raw) {
		return b, errdefs.Validationf("%s: invalid JSON", field())
	}
	return putBytes(b, raw), nil
}

// putMessage validates m as inMessage does and appends it.
func putMessage(b []byte, m model.Message, field fieldName) ([]byte, error) {
	b = putString(b, m.ID)
	b = putString(b, string(m.Role))
	b = putString(b, m.Name)
	b = putTime(b, store.StoredTime(m.CreatedAt))
	var err error
	if b, err = putParts(b, m.Parts, func() string { return field() + ".parts" }); err != nil {
		return b, err
	}
	return putJSONMap(b, m.Metadata, func() string { return field() + ".metadata" })
}

func putParts(b []byte, parts []model.Part, field fieldName) ([]byte, error) {
	if parts == nil {
		return putUint(b, 0), nil
	}
	b = putUint(b, uint64(len(parts))+1)
	for i, p := range parts {
		var err error
		if b, err = putPart(b, p, func() string { return field() + "[" + strconv.Itoa(i) + "]" }); err != nil {
			return b, err
		}
	}
	return b, nil
}

func putPart(b []byte, p model.Part, field fieldName) ([]byte, error) {
	b = putString(b, string(p.Type))
	b = putString(b, p.Text)
	b = putString(b, p.MediaType)
	var err error
	if b, err = putRaw(b, p.Data, func() string { return field() + ".data" }); err != nil {
		return b, err
	}
	b = putBool(b, p.File != nil)
	if f := p.File; f != nil {
		b = putBytes(putString(b, f.Name), f.Bytes)
		b = putString(b, f.URL)
	}
	b = putBool(b, p.ToolCall != nil)
	if c := p.ToolCall; c != nil {
		b = putString(putString(b, c.ID), c.Name)
		if b, err = putRaw(b, c.Arguments, func() string { return field() + ".tool_call.arguments" }); err != nil {
			return b, err
		}
	}
	b = putBool(b, p.ToolResult != nil)
	if r := p.ToolResult; r != nil {
		b = putString(putString(b, r.ToolCallID), r.Name)
		b = putBool(putString(b, r.Content), r.IsError)
	}
	return putJSONMap(b, p.Metadata, func() string { return field() + ".metadata" })
}

// reader decodes a record. Records are written by this package only, so a
// malformed one is a bug: reading past its end panics.
type reader struct {
	s string
	i int
}

func (r *reader) uint() uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		c := r.s[r.i]
		r.i++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

func (r *reader) int() int64 {
	u := r.uint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *reader) bool() bool {
	r.i++
	return r.s[r.i-1] != 0
}

// str returns the next string: a substring of the record, not a copy.
func (r *reader) str() string {
	n := int(r.uint())
	r.i += n
	return r.s[r.i-n : r.i]
}

// bytes returns a fresh copy of the next byte slice (nil stays nil).
func (r *reader) bytes() []byte {
	n := int(r.uint())
	if n == 0 {
		return nil
	}
	r.i += n - 1
	return []byte(r.s[r.i-n+1 : r.i])
}

// uint64LE returns the next 8 bytes, little-endian.
func (r *reader) uint64LE() uint64 {
	var v uint64
	for j := 7; j >= 0; j-- {
		v = v<<8 | uint64(r.s[r.i+j])
	}
	r.i += 8
	return v
}

func (r *reader) time() time.Time {
	r.i++
	switch r.s[r.i-1] {
	case timeMicros:
		return time.UnixMicro(int64(r.uint64LE())).UTC()
	case timeOther:
		nsec := r.uint()
		return time.Unix(r.int(), int64(nsec)).UTC()
	}
	return time.Time{}
}

// jsonMap returns a fresh map of fresh JSON values (nil stays nil).
func (r *reader) jsonMap() map[string]any {
	n := int(r.uint())
	if n == 0 {
		return nil
	}
	m := make(map[string]any, n-1)
	for range n - 1 {
		k := r.str()
		m[k] = r.value()
	}
	return m
}

func (r *reader) value() any {
	r.i++
	switch r.s[r.i-1] {
	case jsonFalse:
		return false
	case jsonTrue:
		return true
	case jsonNumber:
		return math.Float64frombits(r.uint64LE())
	case jsonString:
		return r.str()
	case jsonObject:
		return r.jsonMap()
	case jsonArray:
		a := make([]any, r.uint())
		for i := range a {
			a[i] = r.value()
		}
		return a
	}
	return nil
}

// message returns the next message, which shares nothing mutable with the
// record or with an earlier read. Its parts are taken from room, if not
// nil, while they fit (newParts).
func (r *reader) message(room *[]model.Part) model.Message {
	return model.Message{ID: r.str(), Role: model.Role(r.str()), Name: r.str(), CreatedAt: r.time(), Parts: r.parts(room), Metadata: r.jsonMap()}
}

func (r *reader) parts(room *[]model.Part) []model.Part {
	n := int(r.uint())
	if n == 0 {
		return nil
	}
	parts := newParts(room, n-1)
	for i := range parts {
		parts[i] = r.part()
	}
	return parts
}

// newParts returns n parts: the next n of room if they fit, capped so
// that appending to them cannot overwrite the parts of another message,
// else fresh ones. Reading many messages into one room allocates their
// parts at once rather than one message at a time.
func newParts(room *[]model.Part, n int) []model.Part {
	if room == nil || n == 0 || cap(*room)-len(*room) < n {
		return make([]model.Part, n) // never nil: empty parts stay apart from nil
	}
	free := *room
	*room = free[:len(free)+n]
	return free[len(free) : len(free)+n : len(free)+n]
}

func (r *reader) part() model.Part {
	p := model.Part{Type: model.PartType(r.str()), Text: r.str(), MediaType: r.str(), Data: r.bytes()}
	if r.bool() {
		p.File = &model.File{Name: r.str(), Bytes: r.bytes(), URL: r.str()}
	}
	if r.bool() {
		p.ToolCall = &model.ToolCall{ID: r.str(), Name: r.str(), Arguments: r.bytes()}
	}
	if r.bool() {
		p.ToolResult = &model.ToolResult{ToolCallID: r.str(), Name: r.str(), Content: r.str(), IsError: r.bool()}
	}
	p.Metadata = r.jsonMap()
	return p
}
