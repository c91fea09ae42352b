package memstore

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// TestRecordsKnowEveryField fails when a type stored as a record gains a
// field: putMessage, putPart, putTaskBody, encodeCheckpoint and their readers must then
// learn it, or the store would silently drop it.
func TestRecordsKnowEveryField(t *testing.T) {
	for _, c := range []struct {
		typ    reflect.Type
		fields int
	}{
		{reflect.TypeFor[model.Message](), 6},
		{reflect.TypeFor[model.Part](), 8},
		{reflect.TypeFor[model.File](), 3},
		{reflect.TypeFor[model.ToolCall](), 3},
		{reflect.TypeFor[model.ToolResult](), 4},
		{reflect.TypeFor[model.Artifact](), 5},
		{reflect.TypeFor[run.Message](), 4},
		{reflect.TypeFor[model.TokenUsage](), 3},
		{reflect.TypeFor[run.Task](), 17},
		{reflect.TypeFor[run.PendingSignal](), 4},
		{reflect.TypeFor[run.TaskError](), 2},
		{reflect.TypeFor[engine.Checkpoint](), 9},
		{reflect.TypeFor[engine.BoardSnapshot](), 2},
	} {
		if n := c.typ.NumField(); n != c.fields {
			t.Errorf("%v has %d fields, the record format knows %d: teach it the new ones", c.typ, n, c.fields)
		}
	}
}

// everyPart returns parts that set every field of model.Part between
// them, with nil and empty variants of the optional ones.
func everyPart() []model.Part {
	return []model.Part{
		{Type: model.PartText, Text: "héllo ✓", MediaType: "text/plain", Metadata: map[string]any{}},
		{Type: model.PartData, Data: json.RawMessage(` {"a": [1, 2.5, null]} `), Metadata: map[string]any{
			"n": 3, "f": 2.5, "s": "x", "b": true, "null": nil, "list": []any{"a", 1.0, false, map[string]any{}},
			"obj": map[string]any{"deep": []any{}},
		}},
		{Type: model.PartData, Data: json.RawMessage{}},
		{Type: model.PartFile, File: &model.File{Name: "f", Bytes: []byte{0, 1, 2}}},
		{Type: model.PartFile, File: &model.File{Name: "e", Bytes: []byte{}}},
		{Type: model.PartFile, File: &model.File{URL: "https://example.invalid/f"}},
		{Type: model.PartToolCall, ToolCall: &model.ToolCall{ID: "c", Name: "clock", Arguments: json.RawMessage(`{"tz":"UTC"}`)}},
		{Type: model.PartToolCall, ToolCall: &model.ToolCall{ID: "d", Name: "noargs"}},
		{Type: model.PartToolResult, ToolResult: &model.ToolResult{ToolCallID: "c", Name: "clock", Content: "12:00", IsError: true}},
	}
}

func everyMessage() model.Message {
	return model.Message{
		ID: "m", Role: model.RoleAssistant, Name: "echo", Parts: everyPart(),
		Metadata:  map[string]any{"k": map[string]any{"n": 1}},
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("x", 3600)),
	}
}

// normalMessage is m as the store keeps it: times at microsecond
// precision in UTC, maps of JSON values, empty raw JSON as nil; nil and
// empty slices and maps otherwise kept apart.
func normalMessage(t *testing.T, m model.Message) model.Message {
	t.Helper()
	normal := func(m map[string]any) map[string]any {
		out, err := inJSONMap(m, func() string { return "metadata" })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	m.CreatedAt = store.StoredTime(m.CreatedAt)
	m.Metadata = normal(m.Metadata)
	if m.Parts != nil {
		m.Parts = slices.Clone(m.Parts)
		for i, p := range m.Parts {
			if len(p.Data) == 0 {
				p.Data = nil
			}
			if p.ToolCall != nil && len(p.ToolCall.Arguments) == 0 {
				call := *p.ToolCall
				call.Arguments = nil
				p.ToolCall = &call
			}
			p.Metadata = normal(p.Metadata)
			m.Parts[i] = p
		}
	}
	return m
}

// TestMessageRecordRoundTrip checks that a message read back from its
// record is the message given, normalised.
func TestMessageRecordRoundTrip(t *testing.T) {
	for name, m := range map[string]model.Message{
		"every field": everyMessage(),
		"nil parts":   {Role: model.RoleUser},
		"empty parts": {Role: model.RoleUser, Parts: []model.Part{}},
	} {
		want := normalMessage(t, m)
		b, err := putMessage(nil, m, func() string { return "m" })
		if err != nil {
			t.Fatal(err)
		}
		for _, room := range []*[]model.Part{nil, new([]model.Part), ptr(make([]model.Part, 0, 1)), ptr(make([]model.Part, 0, 10))} {
			r := reader{s: string(b)}
			if got := r.message(room); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read back\n%#v\nwant\n%#v", name, got, want)
			}
			if r.i != len(r.s) {
				t.Errorf("%s: %d bytes of the record left unread", name, len(r.s)-r.i)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestMessagesShareRoom checks that messages read into one room get their
// own parts: appending to one message's parts leaves the next one's be.
func TestMessagesShareRoom(t *testing.T) {
	b, err := putMessage(nil, everyMessage(), func() string { return "m" })
	if err != nil {
		t.Fatal(err)
	}
	want := normalMessage(t, everyMessage())
	room := make([]model.Part, 0, 3*len(want.Parts)+1)
	var got []model.Message
	for range 4 { // the last one does not fit
		r := reader{s: string(b)}
		got = append(got, r.message(&room))
	}
	_ = append(got[0].Parts, model.TextPart("overwrite?"))
	got[1].Parts[0].Text = "changed"
	for i, m := range got {
		if i == 1 {
			continue
		}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("message %d read back\n%#v\nwant\n%#v", i, m, want)
		}
	}
}

func TestMessageRecordRejects(t *testing.T) {
	for name, p := range map[string]model.Part{
		"data":      {Type: model.PartData, Data: json.RawMessage(`{`)},
		"arguments": {Type: model.PartToolCall, ToolCall: &model.ToolCall{ID: "c", Arguments: json.RawMessage(`nope`)}},
		"metadata":  {Type: model.PartText, Metadata: map[string]any{"ch": make(chan int)}},
	} {
		m := model.Message{Role: model.RoleUser, Parts: []model.Part{p}}
		if _, err := putMessage(nil, m, func() string { return "m" }); err == nil {
			t.Errorf("%s: invalid part encoded without an error", name)
		}
	}
}

// TestCheckpointRecordRoundTrip checks a checkpoint read back from its
// record against the one given, normalised as the store does.
func TestCheckpointRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	for name, cp := range map[string]engine.Checkpoint{
		"every field": {
			ExecID: "r", Step: "iter:2", Iteration: 2,
			Board: &engine.BoardSnapshot{
				Vars:     map[string]any{"n": 1, "s": "x"},
				Channels: map[string][]model.Message{engine.MainChannel: {everyMessage()}, "empty": {}, "nil": nil},
			},
			Payload:    json.RawMessage(`{"p": 1}`),
			Attributes: map[string]string{store.AttrAttempt: "3", "k": "v"},
			Timestamp:  at, OriginalStartedAt: at.Add(-time.Hour), SpecVersion: "1.0.0",
		},
		"nil maps": {ExecID: "r", Board: &engine.BoardSnapshot{}, Timestamp: at},
		"empty maps": {
			ExecID: "r", Board: &engine.BoardSnapshot{Vars: map[string]any{}, Channels: map[string][]model.Message{}},
			Attributes: map[string]string{}, Timestamp: at,
		},
	} {
		in, err := encodeCheckpoint(cp)
		if err != nil {
			t.Fatal(err)
		}
		want := normalCheckpoint(t, cp)
		if got := in.decode(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read back\n%#v\nwant\n%#v", name, got, want)
		}
	}
}

// normalCheckpoint is cp as the store keeps it: normalised as messages
// are, every channel a non-nil slice.
func normalCheckpoint(t *testing.T, cp engine.Checkpoint) engine.Checkpoint {
	t.Helper()
	board := engine.BoardSnapshot{}
	var err error
	if board.Vars, err = inJSONMap(cp.Board.Vars, func() string { return "vars" }); err != nil {
		t.Fatal(err)
	}
	if cp.Board.Channels != nil {
		board.Channels = map[string][]model.Message{}
		for name, msgs := range cp.Board.Channels {
			out := make([]model.Message, len(msgs))
			for i, m := range msgs {
				out[i] = normalMessage(t, m)
			}
			board.Channels[name] = out
		}
	}
	cp.Board = &board
	cp.Timestamp = store.StoredTime(cp.Timestamp)
	cp.OriginalStartedAt = store.StoredTime(cp.OriginalStartedAt)
	return cp
}

// TestTaskRecordRoundTrip checks a task read back from its record: the
// header as given, the body normalised as messages are.
func TestTaskRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	status := everyMessage()
	for name, task := range map[string]run.Task{
		"every field": {
			ID: "t", ContextID: "c", AgentID: "a", Tenant: "acme", State: run.StateInputRequired,
			StatusMessage: &status, Error: &run.TaskError{Class: "c", Message: "m"},
			Artifacts: []model.Artifact{
				{ID: "art", Name: "n", Description: "d", Parts: everyPart(), Metadata: map[string]any{"n": 1}},
				{ID: "empty", Parts: []model.Part{}, Metadata: map[string]any{}},
				{ID: "nil"},
			},
			Usage:      model.TokenUsage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3},
			ModelUsage: map[string]model.TokenUsage{"m": {InputTokens: 1, OutputTokens: 1, TotalTokens: 2}, "": {OutputTokens: 1, TotalTokens: 1}},
			Attempt:    2, CancelRequested: true, Metadata: map[string]any{"k": []any{"v", 1}},
			Version: 7, CreatedAt: at, UpdatedAt: at.Add(time.Second),
		},
		"nil slices and maps": {ID: "t", ContextID: "c", AgentID: "a", State: run.StateWorking, Version: 1, CreatedAt: at, UpdatedAt: at},
		"empty slices and maps": {
			ID: "t", ContextID: "c", AgentID: "a", State: run.StateWorking, Version: 1, CreatedAt: at, UpdatedAt: at,
			Artifacts: []model.Artifact{}, Metadata: map[string]any{},
		},
	} {
		body, err := putTaskBody(nil, task, func() string { return "task" })
		if err != nil {
			t.Fatal(err)
		}
		h := taskHeader{id: task.ID, contextID: task.ContextID, agentID: task.AgentID, tenant: task.Tenant, version: task.Version, created: task.CreatedAt, updated: task.UpdatedAt, state: task.State}
		rec := taskRecord(h, body)
		if got := headerOf(rec); got != h {
			t.Errorf("%s: header read back %+v, want %+v", name, got, h)
		}
		want := task
		if task.StatusMessage != nil {
			m := normalMessage(t, *task.StatusMessage)
			want.StatusMessage = &m
		}
		if task.Artifacts != nil {
			want.Artifacts = slices.Clone(task.Artifacts)
			for i, a := range want.Artifacts {
				a.Parts = normalMessage(t, model.Message{Parts: a.Parts}).Parts
				a.Metadata = normalMessage(t, model.Message{Metadata: a.Metadata}).Metadata
				want.Artifacts[i] = a
			}
		}
		want.Metadata = normalMessage(t, model.Message{Metadata: task.Metadata}).Metadata
		if got := readTask(rec); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read back\n%#v\nwant\n%#v", name, got, want)
		}
	}
}

// TestEventLogTypesAndPrune checks that well-known and other event types,
// times and data survive appends and a prune.
func TestEventLogTypesAndPrune(t *testing.T) {
	zone := time.FixedZone("x", -7200)
	var want []run.Event
	for i, typ := range []string{"run.start", "custom.type", "delta", strings.Repeat("long.", 40), "run.end", "x"} {
		want = append(want, run.Event{
			RunID: "r", Seq: int64(i + 1), Type: typ,
			Time: time.Date(2026, 1, 2, 3, 4, i, 123456789, zone),
			Data: json.RawMessage(`{"i":` + string(rune('0'+i)) + `}`),
		})
	}
	now := store.StoredTime(time.Now())
	l := &eventLog{runID: "r"}
	l.append(want[:2], now)
	l.append(want[2:], now)
	for i := range want {
		want[i].Time = store.StoredTime(want[i].Time)
	}
	if got := l.read(0, len(want)); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%v\nwant\n%v", got, want)
	}
	for through := int64(1); through <= int64(len(want)); through++ {
		l.prune(through)
		if len(l.index) == 0 {
			continue
		}
		if got := l.read(0, len(l.index)); !reflect.DeepEqual(got, want[through:]) {
			t.Fatalf("after pruning through %d: read back\n%v\nwant\n%v", through, got, want[through:])
		}
	}
	if l.arena != nil || len(l.index) != 0 {
		t.Fatalf("a log pruned through its last event keeps %d bytes and %d entries", len(l.arena), len(l.index))
	}
	next := run.Event{RunID: "r", Seq: int64(len(want) + 1), Type: "status", Time: want[0].Time, Data: json.RawMessage(`{"i":9}`)}
	l.append([]run.Event{next}, now)
	if got := l.read(0, 1); l.lastSeq() != next.Seq || !reflect.DeepEqual(got, []run.Event{next}) {
		t.Fatalf("appended after pruning everything: last seq %d, read back %v, want %v", l.lastSeq(), got, next)
	}
}

// TestKnownType checks that knownType numbers knownTypes as they are
// listed, and nothing else.
func TestKnownType(t *testing.T) {
	for i, typ := range knownTypes {
		if got := knownType(typ); got != uint8(i+1) {
			t.Errorf("knownType(%q) = %d, want %d", typ, got, i+1)
		}
	}
	for _, typ := range []string{"", "custom", "run.star", "run.starts", "Status"} {
		if got := knownType(typ); got != 0 {
			t.Errorf("knownType(%q) = %d, want 0", typ, got)
		}
	}
}

// TestTimeRoundTrip checks that putTime and reader.time keep every time,
// in either of their forms.
func TestTimeRoundTrip(t *testing.T) {
	for _, in := range []time.Time{
		{}, time.Unix(0, 0), time.Unix(-1, 999_999_000), time.Unix(1_700_000_000, 123_456_000), time.Unix(1_700_000_000, 123_456_789),
		time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC), time.Date(-290_000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(300_000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(maxMicrosSec, 999_999_000), time.Unix(-maxMicrosSec, 0), time.Unix(maxMicrosSec+1, 0), time.Unix(-maxMicrosSec-1, 5000),
		time.Unix(1<<62, 7), time.Unix(-1<<62, 999_999_999),
	} {
		in = in.UTC()
		if in.IsZero() {
			in = time.Time{}
		}
		b := putTime([]byte("x"), in)
		r := reader{s: string(b) + "y", i: 1}
		if got := r.time(); got != in || r.s[r.i:] != "y" {
			t.Errorf("%v (%d bytes) read back as %v, %q left", in, len(b)-1, got, r.s[r.i:])
		}
	}
}

func TestUvarintLen(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<32 - 1, 1 << 63, 1<<64 - 1} {
		if got, want := uvarintLen(v), len(putUint(nil, v)); got != want {
			t.Errorf("uvarintLen(%d) = %d, want %d", v, got, want)
		}
	}
}
