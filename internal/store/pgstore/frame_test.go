package pgstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"agentd/internal/run"
)

// checkEncodeFrame compares encodeFrame with encoding/json for one event
// whose data is compact JSON (as the runtime writes it).
func checkEncodeFrame(t *testing.T, seq int64, typ, text string, nanos int64) {
	t.Helper()
	data, _ := json.Marshal(map[string]string{"text": text})
	at := time.Unix(0, nanos)
	evs := []run.Event{{Seq: seq, Type: typ, Time: at, Data: data}, {Seq: seq + 1, Type: "delta", Time: at, Data: data}}
	want, err := json.Marshal([]frameEvent{
		{Seq: seq, Type: typ, Time: at.UTC(), Data: data},
		{Seq: seq + 1, Type: "delta", Time: at.UTC(), Data: data},
	})
	if err != nil {
		return // a time encoding/json refuses: not an event time
	}
	if got := encodeFrame(evs); !bytes.Equal(got, want) {
		t.Errorf("encodeFrame:\n got %s\nwant %s", got, want)
	}
}

func TestEncodeFrameMatchesEncodingJSON(t *testing.T) {
	for i, s := range []string{"", "status", "run.end", `"q" \ <b>&`, "é\u2028\x01", "bad\xff"} {
		checkEncodeFrame(t, int64(i), s, s, 1_700_000_000_123_456_789)
	}
}

func FuzzEncodeFrame(f *testing.F) {
	f.Add(int64(1), "delta", "hello", int64(1_700_000_000_000_000_000))
	f.Fuzz(func(t *testing.T, seq int64, typ, text string, nanos int64) {
		checkEncodeFrame(t, seq, typ, text, nanos)
	})
}
