package memstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestContract(t *testing.T) {
	storetest.RunSuite(t, func(t *testing.T) store.Store {
		s := memstore.New()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// fixture is a value of every kind the store keeps, each holding nested
// mutable parts (maps, slices, byte slices).
type fixture struct {
	Task  run.Task
	Msg   run.Message
	Event run.Event
	CP    engine.Checkpoint
	Push  run.PushConfig
}

func newFixture() fixture {
	parts := func() []model.Part {
		return []model.Part{
			model.TextPart("hello"),
			{Type: model.PartData, Data: json.RawMessage(`{"a":1}`), Metadata: map[string]any{"m": []any{"x"}}},
			model.FileBytesPart("f", "application/octet-stream", []byte{1, 2, 3}),
			model.ToolCallPart(model.ToolCall{ID: "c", Name: "clock", Arguments: json.RawMessage(`{"tz":"UTC"}`)}),
		}
	}
	status := model.Message{Role: model.RoleAssistant, Parts: parts(), Metadata: map[string]any{"k": map[string]any{"n": "v"}}}
	return fixture{
		Task: run.Task{
			ID: "t-1", ContextID: "c-1", AgentID: "a", State: run.StateWorking,
			StatusMessage: &status,
			Error:         &run.TaskError{Class: "c", Message: "m"},
			Artifacts:     []model.Artifact{{ID: "art", Parts: parts(), Metadata: map[string]any{"l": []any{"x"}}}},
			Metadata:      map[string]any{"nested": map[string]any{"list": []any{"a"}}},
		},
		Msg:   run.Message{ContextID: "c-1", Message: model.Message{ID: "m-1", Role: model.RoleUser, Parts: parts(), Metadata: map[string]any{"k": []any{"v"}}}},
		Event: run.Event{RunID: "t-1", Seq: 1, Type: "step", Data: json.RawMessage(`{"seq":1}`)},
		CP: engine.Checkpoint{
			ExecID:     "t-1",
			Board:      &engine.BoardSnapshot{Vars: map[string]any{"v": map[string]any{"x": []any{"y"}}}, Channels: map[string][]model.Message{"main": {{Role: model.RoleUser, Parts: parts()}}}},
			Payload:    json.RawMessage(`{"p":1}`),
			Attributes: map[string]string{store.AttrAttempt: "1"},
		},
		Push: run.PushConfig{TaskID: "t-1", ID: "p-1", Config: json.RawMessage(`{"url":"u"}`)},
	}
}

// mutate scribbles over every nested mutable part of f.
func mutate(f fixture) {
	scribbleParts := func(ps []model.Part) {
		ps[0].Text = "changed"
		ps[1].Data[1] = 'X'
		ps[1].Metadata["m"].([]any)[0] = "changed"
		ps[2].File.Bytes[0] = 99
		ps[3].ToolCall.Arguments[0] = '['
	}
	f.Task.StatusMessage.Metadata["k"].(map[string]any)["n"] = "changed"
	scribbleParts(f.Task.StatusMessage.Parts)
	f.Task.Error.Message = "changed"
	scribbleParts(f.Task.Artifacts[0].Parts)
	f.Task.Artifacts[0].Metadata["l"].([]any)[0] = "changed"
	f.Task.Metadata["nested"].(map[string]any)["list"].([]any)[0] = "changed"
	scribbleParts(f.Msg.Parts)
	f.Msg.Metadata["k"].([]any)[0] = "changed"
	f.Event.Data[1] = 'X'
	f.CP.Board.Vars["v"].(map[string]any)["x"].([]any)[0] = "changed"
	scribbleParts(f.CP.Board.Channels["main"][0].Parts)
	f.CP.Payload[1] = 'X'
	f.CP.Attributes["k"] = "changed"
	f.Push.Config[1] = 'X'
}

// read returns everything the fixture wrote, as the store returns it.
func read(t *testing.T, ctx context.Context, s *memstore.Store) fixture {
	t.Helper()
	var f fixture
	var err error
	if f.Task, err = s.GetTask(ctx, "t-1"); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.ListMessages(ctx, run.MessageQuery{ContextID: "c-1"})
	if err != nil || len(msgs.Messages) != 1 {
		t.Fatalf("ListMessages: %d messages, %v; want 1", len(msgs.Messages), err)
	}
	f.Msg = msgs.Messages[0]
	evs, err := s.ReadEvents(ctx, "t-1", 0, 10)
	if err != nil || len(evs.Events) != 1 {
		t.Fatalf("ReadEvents: %d events, %v; want 1", len(evs.Events), err)
	}
	f.Event = evs.Events[0]
	cp, err := s.LoadCheckpoint(ctx, "t-1")
	if err != nil || cp == nil {
		t.Fatalf("LoadCheckpoint: %v, %v; want a checkpoint", cp, err)
	}
	f.CP = *cp
	if f.Push, err = s.GetPushConfig(ctx, "t-1", "p-1"); err != nil {
		t.Fatal(err)
	}
	return f
}

func write(t *testing.T, ctx context.Context, s *memstore.Store, f fixture) {
	t.Helper()
	task := f.Task
	err := s.Apply(ctx, store.Change{TaskID: "t-1", CreateTask: &task, Messages: []run.Message{f.Msg}, Events: []run.Event{f.Event}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint(ctx, f.CP); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, f.Push); err != nil {
		t.Fatal(err)
	}
}

// snapshot encodes f, so that later changes to memory it shares do not
// change the snapshot.
func snapshot(t *testing.T, f fixture) string {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInputsAreCopied(t *testing.T) {
	s, ctx := memstore.New(), t.Context()
	in := newFixture()
	write(t, ctx, s, in)
	before := snapshot(t, read(t, ctx, s))
	mutate(in)
	if after := snapshot(t, read(t, ctx, s)); after != before {
		t.Fatalf("mutating the values given to the store changed what it returns:\nbefore %s\nafter  %s", before, after)
	}
}

func TestOutputsAreCopied(t *testing.T) {
	s, ctx := memstore.New(), t.Context()
	write(t, ctx, s, newFixture())
	before := snapshot(t, read(t, ctx, s))
	mutate(read(t, ctx, s))
	if after := snapshot(t, read(t, ctx, s)); after != before {
		t.Fatalf("mutating values the store returned changed what it returns next:\nbefore %s\nafter  %s", before, after)
	}
}

// TestEventDataIsCapped checks that appending to one returned event's Data
// cannot overwrite the next event's, though they share one buffer.
func TestEventDataIsCapped(t *testing.T) {
	s, ctx := memstore.New(), t.Context()
	evs := []run.Event{
		{RunID: "r", Seq: 1, Type: "x", Data: json.RawMessage(`{"n":1}`)},
		{RunID: "r", Seq: 2, Type: "x", Data: json.RawMessage(`{"n":2}`)},
	}
	if err := s.Apply(ctx, store.Change{Events: evs}); err != nil {
		t.Fatal(err)
	}
	page, err := s.ReadEvents(ctx, "r", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(page.Events[0].Data, "garbage"...)
	if !bytes.Equal(page.Events[1].Data, evs[1].Data) {
		t.Fatalf("appending to event 1's Data changed event 2's to %s, want %s", page.Events[1].Data, evs[1].Data)
	}
}

// TestEventsOfSeveralRuns checks that one change may interleave the
// events of several runs, each continuing its own log.
func TestEventsOfSeveralRuns(t *testing.T) {
	s, ctx := memstore.New(), t.Context()
	ev := func(runID string, seq int64) run.Event {
		return run.Event{RunID: runID, Seq: seq, Type: "x", Data: json.RawMessage(`{}`)}
	}
	ok := []run.Event{ev("a", 1), ev("b", 1), ev("b", 2), ev("a", 2), ev("c", 1), ev("a", 3), ev("b", 3)}
	if err := s.Apply(ctx, store.Change{Events: ok}); err != nil {
		t.Fatalf("interleaved runs: %v", err)
	}
	for _, bad := range [][]run.Event{
		{ev("a", 4), ev("b", 4), ev("a", 4)},
		{ev("a", 4), ev("b", 4), ev("a", 6)},
		{ev("a", 4), ev("b", 5)},
		{ev("c", 2), ev("a", 4), ev("c", 2)},
	} {
		if err := s.Apply(ctx, store.Change{Events: bad}); !errdefs.IsConflict(err) {
			t.Errorf("Apply(%v) = %v, want a conflict", bad, err)
		}
	}
	for run, last := range map[string]int64{"a": 3, "b": 3, "c": 1} {
		page, err := s.ReadEvents(ctx, run, 0, 10)
		if err != nil || page.LastSeq != last || len(page.Events) != int(last) {
			t.Errorf("run %s: LastSeq %d, %d events, %v; want %d", run, page.LastSeq, len(page.Events), err, last)
		}
	}
}

// TestCreateAndUpdateInOneChange checks that a change may update the task
// it creates, and that a run known only by its events has no task to
// update.
func TestCreateAndUpdateInOneChange(t *testing.T) {
	s, ctx := memstore.New(), t.Context()
	task := run.Task{ID: "t", ContextID: "c", AgentID: "a", State: run.StateSubmitted}
	upd := task
	upd.State, upd.Version, upd.Attempt = run.StateCompleted, 1, 2
	if err := s.Apply(ctx, store.Change{CreateTask: &task, UpdateTask: &upd}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, "t")
	if err != nil || got.Version != 2 || got.State != run.StateCompleted || got.Attempt != 2 {
		t.Fatalf("GetTask = version %d, state %s, attempt %d, %v; want 2, completed, 2", got.Version, got.State, got.Attempt, err)
	}
	if err := s.Apply(ctx, store.Change{Events: []run.Event{{RunID: "r", Seq: 1, Type: "x", Data: json.RawMessage(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	ghost := run.Task{ID: "r", State: run.StateWorking}
	if err := s.Apply(ctx, store.Change{UpdateTask: &ghost}); !errdefs.IsNotFound(err) {
		t.Fatalf("updating a run without a task: %v, want not found", err)
	}
}

// TestMapsAreJSONNormalised pins the PostgreSQL-like behaviour: numbers in
// maps come back as float64.
func TestMapsAreJSONNormalised(t *testing.T) {
	s, ctx := memstore.New(), t.Context()
	task := run.Task{ID: "t", ContextID: "c", AgentID: "a", State: run.StateSubmitted, Metadata: map[string]any{"n": 3, "s": []string{"x"}}}
	if err := s.Apply(ctx, store.Change{CreateTask: &task}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": float64(3), "s": []any{"x"}}
	if !reflect.DeepEqual(got.Metadata, want) {
		t.Fatalf("Metadata read back = %#v, want %#v (JSON values, as from JSONB)", got.Metadata, want)
	}
}

func TestCanceledContext(t *testing.T) {
	s := memstore.New()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Ping(ctx); err == nil {
		t.Fatal("Ping with a canceled context: got nil, want an error")
	}
	if _, err := s.GetTask(ctx, "t"); err == nil {
		t.Fatal("GetTask with a canceled context: got nil, want an error")
	}
}

func BenchmarkApplyOneEvent(b *testing.B) {
	s, ctx := memstore.New(), b.Context()
	data := json.RawMessage(`{"run_id":"r","type":"engine.run.r.stream.agent.delta","payload":{"text":"hello"}}`)
	b.ReportAllocs()
	var seq int64
	for b.Loop() {
		seq++
		ev := run.Event{RunID: "r", Seq: seq, Type: "delta", Time: time.Unix(0, 0), Data: data}
		if err := s.Apply(ctx, store.Change{Events: []run.Event{ev}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadEvents100Of10k(b *testing.B) {
	s, ctx := memstore.New(), b.Context()
	const total = 10_000
	evs := make([]run.Event, 0, 1000)
	for seq := int64(1); seq <= total; seq++ {
		evs = append(evs, run.Event{RunID: "r", Seq: seq, Type: "delta", Time: time.Unix(0, 0), Data: json.RawMessage(fmt.Sprintf(`{"seq":%d,"text":"token"}`, seq))})
		if len(evs) == cap(evs) {
			if err := s.Apply(ctx, store.Change{Events: evs}); err != nil {
				b.Fatal(err)
			}
			evs = evs[:0]
		}
	}
	b.ReportAllocs()
	var after int64
	for b.Loop() {
		after = (after + 997) % (total - 100)
		page, err := s.ReadEvents(ctx, "r", after, 100)
		if err != nil || len(page.Events) != 100 {
			b.Fatalf("ReadEvents after %d: %d events, %v", after, len(page.Events), err)
		}
	}
}
