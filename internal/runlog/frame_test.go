package runlog

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// sample is a body of the shapes state events have: strings that need
// escaping, numbers, omitted members, nested objects.
type sample struct {
	State   string         `json:"state"`
	Attempt int64          `json:"attempt,omitempty"`
	Error   *sampleError   `json:"error,omitempty"`
	Meta    map[string]any `json:"meta,omitempty"`
}

type sampleError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// reference is what encoding/json writes for an event: the frame's members,
// then the body's (embedded fields are inlined in order).
type reference struct {
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"`
	Type  string    `json:"type"`
	Time  time.Time `json:"time"`
	sample
}

type textReference struct {
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"`
	Type  string    `json:"type"`
	Time  time.Time `json:"time"`
	Actor string    `json:"actor"`
	Text  string    `json:"text"`
}

// tricky strings cover every escaping rule of encoding/json.
var tricky = []string{
	"", "plain", `q"uote`, `back\slash`, "tab\tnl\ncr\rbs\bff\f", "nul\x00 ctl\x01\x1f del\x7f",
	"<b>&amp;</b>", "é ✓ 🎉", "bad \xff utf8 \xe2\x82", "sep\u2028 para\u2029", "\ufffd", "a/b",
	"019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
}

// checkFrame compares frame with encoding/json for one event.
func checkFrame(t *testing.T, runID string, seq int64, typ string, at time.Time, body sample) {
	t.Helper()
	want, err := json.Marshal(reference{RunID: runID, Seq: seq, Type: typ, Time: at.UTC(), sample: body})
	if err != nil {
		return // a time encoding/json refuses (year beyond 9999): not an event time
	}
	enc, err := Encode(body)
	if err != nil {
		t.Fatal(err)
	}
	if got := frame(runID, seq, typ, at, enc); !bytes.Equal(got, want) {
		t.Errorf("frame:\n got %s\nwant %s", got, want)
	}
}

// checkText compares a token's body (Text) with encoding/json.
func checkText(t *testing.T, runID string, seq int64, actor, text string, at time.Time) {
	t.Helper()
	want, err := json.Marshal(textReference{RunID: runID, Seq: seq, Type: "delta", Time: at.UTC(), Actor: actor, Text: text})
	if err != nil || text == "" {
		return
	}
	if got := frame(runID, seq, "delta", at, Text(actor, text)); !bytes.Equal(got, want) {
		t.Errorf("text frame:\n got %s\nwant %s", got, want)
	}
}

func TestFramesMatchEncodingJSON(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 890, time.FixedZone("x", 3600))
	for i, s := range tricky {
		for _, runID := range []string{"019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", s} {
			checkFrame(t, runID, int64(i), "status", at, sample{State: s})
			checkFrame(t, runID, int64(i)<<40, s, at, sample{State: "failed", Attempt: -int64(i), Error: &sampleError{Class: s, Message: s + "!"}})
			checkFrame(t, runID, 1, "input", time.Unix(0, 0), sample{Meta: map[string]any{s: []any{s, 1.5, nil}}})
			checkText(t, runID, int64(i), "echo_iter1", s, at)
			checkText(t, runID, int64(i), s, "hello", at)
		}
	}
	if got := frame("r", 1, "gap", at, Object(nil)); !json.Valid(got) {
		t.Errorf("empty body: %s", got)
	}
	if a, b := frame("r", 1, "gap", at, Object(nil)), frame("r", 1, "gap", at, Object([]byte(`{}`))); !bytes.Equal(a, b) {
		t.Errorf("nil and {} bodies differ: %s vs %s", a, b)
	}
}

// FuzzFrame checks the hand-written frame against encoding/json.
func FuzzFrame(f *testing.F) {
	for i, s := range tricky {
		f.Add(s, int64(i), "status", s, int64(i), int64(1_700_000_000_000_000_000))
	}
	f.Fuzz(func(t *testing.T, runID string, seq int64, typ, text string, attempt, nanos int64) {
		at := time.Unix(0, nanos)
		checkFrame(t, runID, seq, typ, at, sample{State: text, Attempt: attempt})
		checkText(t, runID, seq, typ, text, at)
		// Another time in the same second, written from the second's
		// shared text, and one in the next second.
		for _, d := range []time.Duration{time.Duration(seq%1_000_000_000) - time.Duration(at.Nanosecond()), time.Second} {
			checkFrame(t, runID, seq, typ, at.Add(d), sample{State: text, Attempt: attempt})
		}
	})
}

func BenchmarkFrame(b *testing.B) {
	at := time.Now()
	head := appendFrameHead(nil, "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b")
	body := Text("echo", "hello")
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = frameAfter(buf[:0], head, 7, "delta", at, body)
	}
}
