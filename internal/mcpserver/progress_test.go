package mcpserver

import (
	"encoding/json"
	"testing"

	"agentd/internal/run"
)

// tokenText, the fast path of token deltas, agrees with decoding the whole
// event where it reads one, and leaves the shapes it does not read to it.
func FuzzTokenText(f *testing.F) {
	for _, s := range []string{"tok1 ", "", `a "quoted" word`, `,"text":"x`, "\u2028 é 😀 \\ / \n", `"}`} {
		f.Add(s, "echo")
	}
	f.Fuzz(func(t *testing.T, text, actor string) {
		data, err := json.Marshal(struct {
			RunID string `json:"run_id"`
			Seq   int64  `json:"seq"`
			Type  string `json:"type"`
			Actor string `json:"actor"`
			Text  string `json:"text"`
		}{"r", 1, "delta", actor, text})
		if err != nil {
			t.Skip()
		}
		var want eventData
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := tokenText(data)
		if ok && got != want.Text {
			t.Fatalf("tokenText(%s) = %q, %v; want %q", data, got, ok, want.Text)
		}
	})
}

func TestTokenTextLeavesOtherShapes(t *testing.T) {
	for _, data := range []string{
		`{"run_id":"r","seq":2,"type":"delta","actor":"a","tool_call":{"id":"1","name":"clock"}}`,
		`{"run_id":"r","seq":2,"type":"delta","actor":"a","tool_result":{"tool_call_id":"1","content":"x"}}`,
		`{"run_id":"r","seq":2,"type":"delta","text":"a","actor":"b"}`,
	} {
		if text, ok := tokenText([]byte(data)); ok {
			t.Errorf("tokenText(%s) = %q, want it left to the full decode", data, text)
		}
		n := describe(run.Event{Type: "delta", Data: json.RawMessage(data)})
		if n.msg == "" {
			t.Errorf("describe(%s) says nothing", data)
		}
	}
}

// The progress message of each kind of event (the mapping of doc.go).
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		typ, data string
		want      note
	}{
		{"delta", `{"type":"delta","actor":"echo","text":"tok1 "}`, note{msg: "tok1 ", token: true}},
		{"delta", `{"type":"delta","actor":"a","tool_call":{"id":"c1","name":"clock"}}`, note{msg: "calling tool clock"}},
		{"delta", `{"type":"delta","actor":"a","tool_result":{"tool_call_id":"c1","name":"clock","content":"x"}}`, note{msg: "tool clock answered"}},
		{"delta", `{"type":"delta","actor":"a","tool_result":{"tool_call_id":"c1","name":"clock","content":"x","is_error":true}}`, note{msg: "tool clock failed"}},
		{"step.start", `{"type":"step.start","actor":"writer"}`, note{msg: "step writer started"}},
		{"step.complete", `{"type":"step.complete","actor":"writer"}`, note{msg: "step writer completed"}},
		{"step.error", `{"type":"step.error","actor":"writer"}`, note{msg: "step writer failed"}},
		{"progress", `{"type":"progress","tool":"ask_echo","text":"hello"}`, note{msg: "hello"}},
		{"progress", `{"type":"progress","tool":"ask_echo","state":"working"}`, note{msg: "tool ask_echo is working"}},
		{"status", `{"type":"status","state":"working"}`, note{msg: "run working"}},
		{"run.end", `{"type":"run.end","state":"working"}`, note{}},
		{"run.end", `{"type":"run.end","state":"input-required"}`, note{done: true}},
		{"run.end", `{"type":"run.end","state":"completed"}`, note{done: true}},
		{"run.start", `{"type":"run.start","attempt":1}`, note{}},
		{"artifact", `{"type":"artifact"}`, note{}},
		{"effect.intent", `{"type":"effect.intent","call_id":"c1","tool":"charge","key":"fx-1","effects":"keyed"}`, note{msg: "tool charge: its effect is recorded before it runs (key fx-1)"}},
		{"effect.result", `{"type":"effect.result","call_id":"c1","tool":"charge","key":"fx-1","content":"ok"}`, note{msg: "tool charge: its effect is done (key fx-1)"}},
		{"effect.doubt", `{"type":"effect.doubt","call_id":"c1","tool":"charge","key":"fx-1","policy":"ask"}`, note{msg: "tool charge is in doubt after a crash; policy ask (key fx-1)"}},
		{"effect.resolved", `{"type":"effect.resolved","call_id":"c1","tool":"charge","key":"fx-1","resolution":"skipped"}`, note{msg: "tool charge in doubt: skipped (key fx-1)"}},
	} {
		if got := describe(run.Event{Type: c.typ, Data: json.RawMessage(c.data)}); got != c.want {
			t.Errorf("describe(%s %s) = %+v, want %+v", c.typ, c.data, got, c.want)
		}
	}
}
