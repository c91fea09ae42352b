package agui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	runv "agentd/internal/run"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// readLog reads a run's log: one event's data per line, as the REST SSE
// stream delivers it.
func readLog(t *testing.T, path string) []runv.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []runv.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var h struct {
			RunID string `json:"run_id"`
			Seq   int64  `json:"seq"`
			Type  string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, runv.Event{RunID: h.RunID, Seq: h.Seq, Type: h.Type, Data: append([]byte(nil), sc.Bytes()...)})
	}
	return out
}

// translateAGUI translates a whole log as AG-UI runs "run-1", "run-2", …:
// each from where the previous one finished.
func translateAGUI(t *testing.T, evs []runv.Event) []byte {
	var b bytes.Buffer
	n := 1
	tr := newTranslator("thread", "run-1", &[]Message{})
	var dec logDecoder // as a stream decodes: the actor cache in play
	for _, ev := range evs {
		le, err := dec.decode(ev)
		if err != nil {
			t.Fatal(err)
		}
		if tr.done() {
			n++
			tr = newTranslator("thread", "run-"+strconv.Itoa(n), &[]Message{})
		}
		for _, e := range tr.translate(le) {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// translateUI translates a whole log as UI message streams, one per face
// run.
func translateUI(t *testing.T, evs []runv.Event) []byte {
	var b bytes.Buffer
	tr := newUITranslator()
	for _, ev := range evs {
		le, err := decodeLogEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		if tr.finished {
			b.WriteString("[DONE]\n")
			tr = newUITranslator()
		}
		for _, c := range tr.translate(le) {
			line, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestGolden translates each recorded log under testdata (*.log.jsonl) to
// AG-UI events and to UI message stream chunks and compares them with the
// golden files (-update rewrites them).
func TestGolden(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join("testdata", "*.log.jsonl"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs under testdata: %v", err)
	}
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".log.jsonl")
		t.Run(name, func(t *testing.T) {
			evs := readLog(t, path)
			compare(t, filepath.Join("testdata", name+".agui.golden"), translateAGUI(t, evs))
			compare(t, filepath.Join("testdata", name+".aisdk.golden"), translateUI(t, evs))
		})
	}
}

func compare(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestFastDelta: the token fast path reads what decoding reads, and
// refuses every other shape.
func TestFastDelta(t *testing.T) {
	for _, data := range []string{
		`{"run_id":"r","seq":5,"type":"delta","time":"t","actor":"echo","text":"hello"}`,
		`{"run_id":"r","seq":5,"type":"delta","time":"t","actor":"a/b","text":"say \"hi\"\n\u00e9"}`,
	} {
		ev := runv.Event{RunID: "r", Seq: 5, Type: "delta", Data: []byte(data)}
		fast, ok := fastDelta(ev)
		if !ok {
			t.Fatalf("%s: fast path refused", data)
		}
		var slow logEvent
		if err := json.Unmarshal(ev.Data, &slow); err != nil {
			t.Fatal(err)
		}
		if fast.Actor != slow.Actor || fast.text() != slow.Text {
			t.Errorf("%s: fast %q %q, decoded %q %q", data, fast.Actor, fast.text(), slow.Actor, slow.Text)
		}
	}
	for _, data := range []string{
		`{"run_id":"r","seq":5,"type":"delta","time":"t","actor":"echo","tool_call":{"id":"c","name":"x"}}`,
		`{"run_id":"r","seq":5,"type":"delta","time":"t","actor":"echo","text":"a","extra":1}`,
		`{"run_id":"r","seq":5,"type":"delta","time":"t","actor":"ec\"ho","text":"a"}`,
		`{"run_id":"r","seq":5,"type":"delta","time":"t","text":"a"}`,
	} {
		if _, ok := fastDelta(runv.Event{RunID: "r", Seq: 5, Type: "delta", Data: []byte(data)}); ok {
			t.Errorf("%s: fast path took it", data)
		}
	}
}

// TestSnapshotGolden: the transcript as MESSAGES_SNAPSHOT shows it — user
// text, an assistant's text and tool calls, tool results, an answer to
// approvals (no message), frontend tool results (tool messages under the
// client's ids).
func TestSnapshotGolden(t *testing.T) {
	call := model.ToolCall{ID: "call_0_0", Name: "calculator", Arguments: json.RawMessage(`{"expression":"1+1"}`)}
	approvals, _ := model.DataPart(map[string]any{"approvals": []engine.ApprovalAnswer{{CallID: "call_0_0", Decision: "approve"}}})
	results, _ := engine.ClientToolResultsPart([]model.ToolResult{{ToolCallID: "call_1_0", Name: "confirm", Content: "yes"}})
	assistant := model.NewText(model.RoleAssistant, "Let me see.")
	assistant.Parts = append(assistant.Parts, model.ToolCallPart(call))
	msgs := []runv.Message{
		{TaskID: "r1", Message: model.Message{ID: "m1", Role: model.RoleUser, Parts: []model.Part{model.TextPart("what is 1+1")}}},
		{TaskID: "r1", Message: withID(assistant, "m2")},
		{TaskID: "r1", Message: model.Message{ID: "m3", Role: model.RoleTool, Parts: []model.Part{model.ToolResultPart(model.ToolResult{ToolCallID: "call_0_0", Content: "2"})}}},
		{TaskID: "r1", Message: model.Message{ID: "m4", Role: model.RoleUser, Parts: []model.Part{approvals}}},
		{TaskID: "r1", Message: model.Message{ID: "m5", Role: model.RoleUser, Parts: []model.Part{results},
			Metadata: map[string]any{MetadataToolMessageIDs: map[string]any{"call_1_0": "client-tool-msg"}}}},
	}
	b, err := json.MarshalIndent(messagesOf(msgs), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	compare(t, filepath.Join("testdata", "snapshot.golden"), append(b, '\n'))
}

func withID(m model.Message, id string) model.Message {
	m.ID = id
	return m
}
