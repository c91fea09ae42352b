package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"agentd/internal/model"
	"agentd/internal/store"
)

var (
	viewStrings = []string{
		"", "echo", `"q" \b/`, "<b>&amp;</b>", "nl\ncr\rtab\tbs\bff\f\x00\x1f", "sep\u2028par\u2029",
		"日本🙂", "bad\xffutf8\xc3", "\xe2\x80",
	}
	viewTimes = []time.Time{
		{}, time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), time.Now(),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 5*3600+1800)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // beyond RFC 3339: encoding/json fails
	}
	viewMeta = []map[string]any{
		nil, {}, {"z": 1.0, "a": []any{"<&>", nil, false, 1e21}, "m": map[string]any{"k": "v"}}, {"bad": math.Inf(1)},
	}
)

// sampleViews returns many RunViews, among them some encoding/json cannot
// encode.
func sampleViews() []RunView {
	data, _ := model.DataPart(map[string]any{"k": []any{1.5, "two <3"}})
	parts := []model.Part{
		model.TextPart("hello world"), data,
		{Type: model.PartData, Data: json.RawMessage(" { \"a\" : [ 1 , \"\u2028<\" ] } ")},
		{Type: model.PartData, Data: json.RawMessage(`{"a":`)},
		model.FileBytesPart("a.bin", "application/octet-stream", []byte{0, 1, 255}),
		model.FileURLPart("b.txt", "text/plain", "https://example.com/b?x=1&y=2"),
		model.ToolCallPart(model.ToolCall{ID: "c1", Name: "calc", Arguments: json.RawMessage(`{"expression": "1<2"}`)}),
		model.ToolResultPart(model.ToolResult{ToolCallID: "c1", Content: "3", IsError: true}),
	}
	var views []RunView
	for i, s := range viewStrings {
		msg := model.Message{
			ID: s, Role: model.Role(viewStrings[(i+1)%len(viewStrings)]), Name: s,
			Parts:     []model.Part{parts[i%len(parts)], model.TextPart(s)},
			Metadata:  viewMeta[i%len(viewMeta)],
			CreatedAt: viewTimes[i%len(viewTimes)],
		}
		v := RunView{
			ID: s, ContextID: viewStrings[(i+2)%len(viewStrings)], AgentID: "echo",
			Status: store.TaskState(s), Attempt: i - 3,
			Usage:     model.TokenUsage{InputTokens: int64(i), OutputTokens: math.MaxInt64, TotalTokens: -1},
			Metadata:  viewMeta[(i+1)%len(viewMeta)],
			CreatedAt: viewTimes[(i+1)%len(viewTimes)], UpdatedAt: viewTimes[(i+2)%len(viewTimes)],
		}
		switch i % 4 {
		case 0:
			v.Messages = []model.Message{msg, model.NewText(model.RoleUser, s)}
			v.Error = &store.TaskError{Class: s, Message: viewStrings[(i+3)%len(viewStrings)]}
		case 1:
			v.StatusMessage = &msg
			v.Messages = []model.Message{}
			v.Artifacts = []model.Artifact{}
		case 2:
			v.Artifacts = []model.Artifact{{ID: s, Name: s, Description: s, Parts: parts, Metadata: msg.Metadata}, {ID: "a2"}}
			v.Error = &store.TaskError{}
		}
		views = append(views, v)
	}
	all := RunView{
		ID: "r1", ContextID: "c1", AgentID: "echo", Status: store.StateCompleted,
		StatusMessage: &model.Message{Role: model.RoleAssistant, Parts: parts},
		Messages:      []model.Message{{Role: model.RoleUser, Parts: parts[:3]}, {Role: model.RoleTool}},
		Artifacts:     []model.Artifact{{ID: "a", Parts: parts}},
		CreatedAt:     viewTimes[1], UpdatedAt: viewTimes[2],
	}
	return append(views, RunView{}, all)
}

// encodingJSON is what writeJSON writes for v.
func encodingJSON(v *RunView) ([]byte, error) {
	var b bytes.Buffer
	err := json.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

func sameAsEncodingJSON(t *testing.T, v *RunView) {
	t.Helper()
	want, wantErr := encodingJSON(v)
	got, err := appendRunView([]byte("x"), v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: appendRunView error %v, encoding/json error %v", v, err, wantErr)
	}
	if err == nil && string(got) != "x"+string(bytes.TrimSuffix(want, []byte("\n"))) {
		t.Fatalf("%+v:\n got %s\nwant x%s", v, got, want)
	}
}

func TestAppendRunViewMatchesEncodingJSON(t *testing.T) {
	views := sampleViews()
	failing := 0
	for i := range views {
		sameAsEncodingJSON(t, &views[i])
		if _, err := encodingJSON(&views[i]); err != nil {
			failing++
		}
	}
	if failing == 0 || failing == len(views) {
		t.Fatalf("%d of %d sample views fail to encode; want some, not all", failing, len(views))
	}
}

// TestWriteRunViewMatchesWriteJSON compares whole answers, including those
// whose encoding fails.
func TestWriteRunViewMatchesWriteJSON(t *testing.T) {
	for _, v := range sampleViews() {
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		writeJSON(want, http.StatusAccepted, v)
		writeRunView(got, http.StatusAccepted, &v)
		if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) || got.Body.String() != want.Body.String() {
			t.Fatalf("writeRunView wrote %d %v %q,\nwriteJSON wrote %d %v %q", got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
}

func FuzzAppendRunView(f *testing.F) {
	for i, s := range viewStrings {
		f.Add(s, viewStrings[(i+4)%len(viewStrings)], []byte(`{"k": [1, "<"]}`), int64(i)*1e17, i)
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, raw []byte, nanos int64, shape int) {
		when := time.Unix(0, nanos).In(time.FixedZone("z", (shape%60)*1800))
		msg := model.Message{ID: s1, Role: model.Role(s2), Name: s2, CreatedAt: when, Parts: []model.Part{
			model.TextPart(s1), {Type: model.PartData, Data: raw},
			model.ToolCallPart(model.ToolCall{ID: s2, Name: s1, Arguments: raw}),
		}}
		v := RunView{
			ID: s1, ContextID: s2, AgentID: s1 + s2, Status: store.TaskState(s2), Attempt: shape,
			Messages: []model.Message{msg}, CreatedAt: when, UpdatedAt: when.Add(time.Duration(shape)),
			Usage: model.TokenUsage{InputTokens: nanos, TotalTokens: int64(shape)},
		}
		if shape&1 != 0 {
			v.StatusMessage = &msg
			v.Error = &store.TaskError{Class: s2, Message: s1}
		}
		if shape&2 != 0 {
			v.Metadata = map[string]any{s1: s2, s2: []any{float64(nanos), string(raw)}}
			v.Artifacts = []model.Artifact{{ID: s2, Name: s1, Parts: msg.Parts, Metadata: v.Metadata}}
		}
		sameAsEncodingJSON(t, &v)
	})
}

// blockingAnswer is the RunView a blocking send to the echo agent answers.
func blockingAnswer() RunView {
	now := time.Now()
	return RunView{
		ID: model.NewID(), ContextID: model.NewID(), AgentID: "echo", Status: store.StateCompleted,
		Messages: []model.Message{
			{ID: model.NewID(), Role: model.RoleUser, Parts: []model.Part{model.TextPart("hello world")}, CreatedAt: now},
			{ID: model.NewID(), Role: model.RoleAssistant, Parts: []model.Part{model.TextPart("hello world")}, Name: "echo", CreatedAt: now},
		},
		Usage:   model.TokenUsage{InputTokens: 2, OutputTokens: 2, TotalTokens: 4},
		Attempt: 1, CreatedAt: now, UpdatedAt: now,
	}
}

func BenchmarkWriteRunView(b *testing.B) {
	v := blockingAnswer()
	w := httptest.NewRecorder()
	b.Run("writeRunView", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.Body.Reset()
			writeRunView(w, http.StatusOK, &v)
		}
	})
	b.Run("writeJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.Body.Reset()
			writeJSON(w, http.StatusOK, v)
		}
	})
}
