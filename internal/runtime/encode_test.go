package runtime

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"agentd/internal/model"
	"agentd/internal/store"
)

// bodyJSON is the JSON object of an event body alone.
func bodyJSON(e eventBody) []byte {
	m := e.appendMembers(nil)
	return append([]byte{'{'}, m[1:]...)
}

// referenceFrame is how event data was built before it was written by
// hand: the body marshalled by encoding/json, its members spliced after
// the frame's.
func referenceFrame(t testing.TB, runID string, seq int64, typ string, at time.Time, body any) []byte {
	t.Helper()
	enc, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(`{"run_id":`)
	b = strconv.AppendQuote(b, runID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"type":`...)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"time":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if len(enc) > 2 {
		return append(append(b, ','), enc[1:]...)
	}
	return append(b, '}')
}

// tricky strings cover every escaping rule of encoding/json.
var tricky = []string{
	"", "plain", `q"uote`, `back\slash`, "tab\tnl\ncr\rbs\bff\f", "nul\x00 ctl\x01\x1f del\x7f",
	"<b>&amp;</b>", "é ✓ 🎉", "bad \xff utf8 \xe2\x82", "sep\u2028 para\u2029", "\ufffd", "a/b",
	"019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
}

func stateBodies() []any {
	var out []any
	for i, s := range tricky {
		n := int64(i) * 1_000_003
		out = append(out,
			RunStartData{ContextID: s, AgentID: "echo", Attempt: i},
			RunStartData{ContextID: "c", AgentID: s, Attempt: -i, Resumed: s},
			RunStartData{ContextID: "c", AgentID: s, Attempt: i, Resumed: "crash", Continues: true},
			StatusData{State: store.TaskState(s)},
			StatusData{State: store.StateFailed, Error: &store.TaskError{Class: s, Message: s + "!"}},
			RunEndData{State: store.StateCompleted, Usage: model.TokenUsage{InputTokens: n, OutputTokens: -n, TotalTokens: math.MaxInt64}},
			RunEndData{State: store.TaskState(s), Error: &store.TaskError{}, Usage: model.TokenUsage{TotalTokens: math.MinInt64}},
			GapData{PrunedThrough: n},
		)
	}
	return out
}

// TestStateBodiesMatchEncodingJSON checks the hand-written event data
// against encoding/json, byte for byte.
func TestStateBodiesMatchEncodingJSON(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 890, time.FixedZone("x", 3600))
	for _, runID := range []string{"019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b", `odd"id<>`, ""} {
		for i, body := range stateBodies() {
			if !stateBody(body) {
				t.Fatalf("%#v is not encoded by hand", body)
			}
			got := frame(nil, runID, int64(i), EventStatus, at, &eventBody{state: body}).Data
			if want := referenceFrame(t, runID, int64(i), EventStatus, at, body); !bytes.Equal(got, want) {
				t.Errorf("body %#v:\n got %s\nwant %s", body, got, want)
			}
		}
	}
}

// TestMarshalledBodiesAreSpliced checks the bodies encoding/json encodes:
// marshalled once, spliced into the frame as before.
func TestMarshalledBodiesAreSpliced(t *testing.T) {
	msg := model.NewText(model.RoleAssistant, "why?")
	for _, body := range []any{
		StatusData{State: store.StateInputRequired, Message: &msg},
		InputData{Prompt: msg, Schema: json.RawMessage(`{"type":"string"}`), Source: "<asker>"},
		InputData{},
		RunStartData{},
	} {
		enc, err := marshalBody(body)
		if err != nil {
			t.Fatal(err)
		}
		got := frame(nil, "r", 1, EventInput, time.Unix(0, 0), &eventBody{object: enc}).Data
		if want := referenceFrame(t, "r", 1, EventInput, time.Unix(0, 0), body); !bytes.Equal(got, want) {
			t.Errorf("body %#v:\n got %s\nwant %s", body, got, want)
		}
	}
	if _, err := marshalBody(GapData{}); err == nil {
		t.Error("marshalBody encodes a body it does not know")
	}
}

// TestSplicedBodiesMatchObjects checks the fast path of deltas and steps
// against the object it stands for.
func TestSplicedBodiesMatchObjects(t *testing.T) {
	for _, tc := range []struct{ key, value string }{{"text", `"hi \"there\""`}, {"payload", `{"a":[1,2]}`}, {"payload", `null`}} {
		spliced := eventBody{actor: "echo_iter1", key: tc.key, value: []byte(tc.value)}
		object := eventBody{object: []byte(`{"actor":"echo_iter1","` + tc.key + `":` + tc.value + `}`)}
		a := frame(nil, "r", 7, EventDelta, time.Unix(1, 2), &spliced).Data
		b := frame(nil, "r", 7, EventDelta, time.Unix(1, 2), &object).Data
		if !bytes.Equal(a, b) || !json.Valid(a) {
			t.Errorf("spliced %s, object %s", a, b)
		}
	}
	for _, body := range []eventBody{{}, {object: []byte(`{}`)}} {
		got := frame(nil, "r", 1, EventGap, time.Unix(0, 0), &body).Data
		if want := referenceFrame(t, "r", 1, EventGap, time.Unix(0, 0), struct{}{}); !bytes.Equal(got, want) {
			t.Errorf("empty body: got %s, want %s", got, want)
		}
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range tricky {
		checkJSONString(t, s)
	}
	for c := range 256 { // every byte alone, and after a multi-byte rune
		checkJSONString(t, string([]byte{byte(c)}))
		checkJSONString(t, "é"+string([]byte{byte(c)})+"x")
	}
}

func TestAppendTimeMatchesAppendFormat(t *testing.T) {
	zone := time.FixedZone("z", -(5*3600 + 30*60))
	for _, at := range []time.Time{
		{}, time.Unix(0, 0), time.Unix(1, 1), time.Unix(1700000000, 123456789), time.Unix(1700000000, 120000000).In(zone),
		time.Unix(1700000000, 100), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 5, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, zone), time.Now(),
	} {
		checkTime(t, at)
	}
	// Around a second, forwards and backwards, whatever the zone.
	base := time.Unix(1700000000, 0)
	for _, d := range []time.Duration{0, 1, 999999999, time.Second, time.Second + 5, -1, -time.Second, 59 * time.Second, time.Hour, 24 * time.Hour, 0} {
		checkTime(t, base.Add(d))
		checkTime(t, base.Add(d).In(zone))
	}
}

// TestAppendQuotedMatchesStrconv puts every byte value, and runes that
// strconv.Quote writes as they are or escapes, at every position of ids of
// every length from 0 to 40 (whole words, the overlapping last word and
// strings shorter than a word).
func TestAppendQuotedMatchesStrconv(t *testing.T) {
	seqs := []string{"é", "\u2028", "\ufffd", "\xff", "\xe2\x82", "\u00a0"}
	for c := range 256 {
		seqs = append(seqs, string([]byte{byte(c)}))
	}
	const id = "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b-xyz"
	for n := range len(id) + 1 {
		checkQuoted(t, id[:n])
		for pos := range n {
			for _, seq := range seqs {
				checkQuoted(t, id[:pos]+seq+id[pos:n])
			}
		}
	}
}

func checkQuoted(t testing.TB, s string) {
	t.Helper()
	if got, want := appendQuoted([]byte("x"), s), strconv.AppendQuote([]byte("x"), s); !bytes.Equal(got, want) {
		t.Fatalf("appendQuoted(%q) = %s, want %s", s, got, want)
	}
}

func checkTime(t testing.TB, at time.Time) {
	t.Helper()
	if got, want := appendTime(nil, at), at.UTC().AppendFormat(nil, time.RFC3339Nano); !bytes.Equal(got, want) {
		t.Fatalf("appendTime(%v) = %s, want %s", at, got, want)
	}
}

func checkJSONString(t testing.TB, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := model.AppendJSONString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("model.AppendJSONString(%q) = %s, want %s", s, got, want)
	}
}

// FuzzStateBodies compares the hand-written bodies with encoding/json on
// arbitrary strings and numbers.
func FuzzStateBodies(f *testing.F) {
	for i, s := range tricky {
		f.Add(s, tricky[len(tricky)-1-i], int64(i), int64(-i))
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, n1, n2 int64) {
		checkJSONString(t, s1)
		checkQuoted(t, s1)
		checkTime(t, time.Unix(n1, n2))
		at := time.Unix(n1, n2).In(time.FixedZone("z", int(n2%50000)))
		if at.Year() < 0 || at.Year() > 9999 {
			at = time.Unix(0, n2)
		}
		for _, body := range []any{
			RunStartData{ContextID: s1, AgentID: s2, Attempt: int(n1), Resumed: s2},
			StatusData{State: store.TaskState(s1), Error: &store.TaskError{Class: s2, Message: s1}},
			RunEndData{State: store.TaskState(s2), Usage: model.TokenUsage{InputTokens: n1, OutputTokens: n2, TotalTokens: n1 ^ n2}},
			GapData{PrunedThrough: n1},
		} {
			got := frame(nil, s1, n2, s2, at, &eventBody{state: body}).Data
			if want := referenceFrame(t, s1, n2, s2, at, body); !bytes.Equal(got, want) {
				t.Fatalf("body %#v:\n got %s\nwant %s", body, got, want)
			}
		}
	})
}

// BenchmarkFrame frames a status event, as the runtime does several times
// per run: a quoted run id and type, a time and a body of strings.
func BenchmarkFrame(b *testing.B) {
	runID := "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b"
	at := time.Date(2026, 11, 22, 8, 30, 15, 123456000, time.UTC)
	body := &eventBody{state: StatusData{State: store.StateWorking}}
	buf := make([]byte, 0, 256)
	for b.Loop() {
		_ = frame(buf[:0], runID, 7, "run.status", at, body)
	}
}
