package memstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// echoFixture is one echo run's ids, messages and event maker.
type echoFixture struct {
	id, contextID, atText string
	at                    time.Time
	user, reply           model.Message
}

func newEchoFixture(n int) echoFixture {
	id, at := fmt.Sprintf("run-%08d", n), time.Now().UTC()
	return echoFixture{
		id: id, contextID: fmt.Sprintf("ctx-%08d", n), at: at, atText: at.Format(time.RFC3339Nano),
		user:  model.Message{ID: "msg-" + id, Role: model.RoleUser, Parts: []model.Part{model.TextPart("hello world")}, CreatedAt: at},
		reply: model.Message{ID: "reply-" + id, Role: model.RoleAssistant, Name: "echo", Parts: []model.Part{model.TextPart("hello world")}, CreatedAt: at},
	}
}

// ev is event seq of the run, of type typ, with body's members.
func (f echoFixture) ev(seq int64, typ, body string) run.Event {
	data := `{"run_id":"` + f.id + `","seq":` + strconv.FormatInt(seq, 10) + `,"type":"` + typ + `","time":"` + f.atText + `",` + body + `}`
	return run.Event{RunID: f.id, Seq: seq, Type: typ, Time: f.at, Data: json.RawMessage(data)}
}

// create stores the run's task with the idempotency key of its user
// message, the message, run.start and the status events evs (at most two).
func (f echoFixture) create(ctx context.Context, s *memstore.Store, task *run.Task, eventsValid bool, evs ...run.Event) error {
	var all [3]run.Event
	all[0] = f.ev(1, "run.start", `"context_id":"`+f.contextID+`","agent_id":"echo","attempt":1`)
	n := 1 + copy(all[1:], evs)
	return s.Apply(ctx, store.Change{
		Idempotency: &store.IdempotencyKey{ContextID: f.contextID, MessageID: f.user.ID},
		TaskID:      f.id,
		CreateTask:  task,
		Messages:    []run.Message{{ContextID: f.contextID, TaskID: f.id, Message: f.user}},
		Events:      all[:n],
		EventsValid: eventsValid,
	})
}

// checkpoint saves the run's checkpoint after its one iteration.
func (f echoFixture) checkpoint(ctx context.Context, s *memstore.Store) error {
	return s.SaveCheckpoint(ctx, engine.Checkpoint{
		ExecID: f.id, Step: "iter:1", Iteration: 1,
		Board: &engine.BoardSnapshot{Vars: map[string]any{}, Channels: map[string][]model.Message{engine.MainChannel: {f.user, f.reply}}},
		Attributes: map[string]string{
			"agent_id": "echo", store.AttrAttempt: "1", "context_id": f.contextID, "run_id": f.id, "task_id": f.id,
		},
		Timestamp: f.at, OriginalStartedAt: f.at, SpecVersion: "1.0.0",
	})
}

// echoRun writes and reads what the runtime does for one blocking send to
// the demo echo agent: the create (idempotency key, task, user message,
// run.start and status), the start, a checkpoint of the two-message board,
// the step's events, the finish (assistant message, status and run.end)
// and the reads between them.
func echoRun(ctx context.Context, s *memstore.Store, n int) error {
	f := newEchoFixture(n)
	id, contextID, at, reply, ev := f.id, f.contextID, f.at, f.reply, f.ev
	payload := `"payload":{"run_id":"` + id + `","actor":"echo","kind":"model","detail":{"iteration":1}}`

	task := run.Task{ID: id, ContextID: contextID, AgentID: "echo", State: run.StateSubmitted, CreatedAt: at, UpdatedAt: at}
	err := f.create(ctx, s, &task, false, ev(2, "status", `"state":"submitted"`))
	if err != nil {
		return err
	}
	if _, err := s.GetTask(ctx, id); err != nil {
		return err
	}
	lease, err := s.AcquireLease(ctx, id, "replica", time.Minute)
	if err != nil {
		return err
	}
	task.State, task.Attempt, task.Version = run.StateWorking, 1, 1
	if err := s.Apply(ctx, store.Change{UpdateTask: &task, Events: []run.Event{ev(3, "status", `"state":"working"`)}}); err != nil {
		return err
	}
	if _, err := s.ListMessages(ctx, run.MessageQuery{ContextID: contextID, Last: 200}); err != nil {
		return err
	}
	err = f.checkpoint(ctx, s)
	if err != nil {
		return err
	}
	err = s.Apply(ctx, store.Change{Events: []run.Event{
		ev(4, "step.start", `"actor":"echo",`+payload),
		ev(5, "delta", `"actor":"echo","text":"hello"`),
		ev(6, "delta", `"actor":"echo","text":" world"`),
		ev(7, "step.complete", `"actor":"echo",`+payload),
	}})
	if err != nil {
		return err
	}
	if _, err := s.ListMessages(ctx, run.MessageQuery{ContextID: contextID, Last: 1000}); err != nil {
		return err
	}
	task.State, task.Version = run.StateCompleted, 2
	task.Usage = model.TokenUsage{InputTokens: 2, OutputTokens: 2, TotalTokens: 4}
	err = s.Apply(ctx, store.Change{
		UpdateTask: &task,
		Messages:   []run.Message{{ContextID: contextID, TaskID: id, Message: reply}},
		Events: []run.Event{
			ev(8, "status", `"state":"completed"`),
			ev(9, "run.end", `"state":"completed","usage":{"input_tokens":2,"output_tokens":2,"total_tokens":4}`),
		},
	})
	if err != nil {
		return err
	}
	if _, err := s.GetTask(ctx, id); err != nil {
		return err
	}
	if _, err := s.ListMessages(ctx, run.MessageQuery{ContextID: contextID, TaskID: id}); err != nil {
		return err
	}
	return s.ReleaseLease(ctx, lease)
}

// BenchmarkEchoRunRetained measures one echo run against a store already
// holding DefaultRetention finished runs, so that every run also pays for
// evicting one and for the garbage collector marking the retained heap.
// Besides ns/op it reports the collector's CPU time per run (gc-ns/op) and
// the retained heap the collector has to scan (scan-B/run) and holds
// (live-B/run), per retained run.
func BenchmarkEchoRunRetained(b *testing.B) {
	s, ctx := memstore.New(), b.Context()
	n := 0
	for ; n < memstore.DefaultRetention; n++ {
		if err := echoRun(ctx, s, n); err != nil {
			b.Fatal(err)
		}
	}
	samples := []metrics.Sample{
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/gc/scan/heap:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	runtime.GC()
	metrics.Read(samples)
	scan, live := samples[1].Value.Uint64(), samples[2].Value.Uint64()
	gcBefore := samples[0].Value.Float64()
	b.ReportAllocs()
	for b.Loop() {
		n++
		if err := echoRun(ctx, s, n); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	metrics.Read(samples)
	b.ReportMetric((samples[0].Value.Float64()-gcBefore)*1e9/float64(b.N), "gc-ns/op")
	b.ReportMetric(float64(scan)/memstore.DefaultRetention, "scan-B/run")
	b.ReportMetric(float64(live)/memstore.DefaultRetention, "live-B/run")
}

// BenchmarkSaveCheckpoint measures saving the checkpoint of an echo run
// (a two-message board).
func BenchmarkSaveCheckpoint(b *testing.B) {
	s, ctx := memstore.New(), b.Context()
	at := time.Now().UTC()
	msgs := []model.Message{
		{ID: "m-1", Role: model.RoleUser, Parts: []model.Part{model.TextPart("hello world")}, CreatedAt: at},
		{ID: "m-2", Role: model.RoleAssistant, Name: "echo", Parts: []model.Part{model.TextPart("hello world")}, CreatedAt: at},
	}
	cp := engine.Checkpoint{
		ExecID: "r", Step: "iter:1", Iteration: 1,
		Board:      &engine.BoardSnapshot{Vars: map[string]any{}, Channels: map[string][]model.Message{engine.MainChannel: msgs}},
		Attributes: map[string]string{"agent_id": "echo", store.AttrAttempt: "1", "context_id": "c", "run_id": "r", "task_id": "r"},
		Timestamp:  at, OriginalStartedAt: at, SpecVersion: "1.0.0",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%64 == 0 { // keep the history short, as a run's is
			if err := s.DeleteCheckpoints(ctx, "r"); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.SaveCheckpoint(ctx, cp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadEchoRun measures reading back a finished echo run: its
// task, transcript and newest checkpoint.
func BenchmarkReadEchoRun(b *testing.B) {
	s, ctx := memstore.New(), b.Context()
	if err := echoRun(ctx, s, 1); err != nil {
		b.Fatal(err)
	}
	id, contextID := fmt.Sprintf("run-%08d", 1), fmt.Sprintf("ctx-%08d", 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetTask(ctx, id); err != nil {
			b.Fatal(err)
		}
		page, err := s.ListMessages(ctx, run.MessageQuery{ContextID: contextID})
		if err != nil || len(page.Messages) != 2 {
			b.Fatalf("ListMessages: %d messages, %v", len(page.Messages), err)
		}
		if cp, err := s.LoadCheckpoint(ctx, id); err != nil || cp == nil {
			b.Fatalf("LoadCheckpoint: %v, %v", cp, err)
		}
	}
}

// sendRun writes and reads what the runtime does for one blocking send to
// the echo agent today: the create (task working, key, user message and
// three events), the checkpoint, the lease, the finish (task update,
// reply and two events), the release and the read of the task.
func sendRun(ctx context.Context, s *memstore.Store, n int) error {
	f := newEchoFixture(n)
	id, contextID, at, reply, ev := f.id, f.contextID, f.at, f.reply, f.ev
	task := run.Task{ID: id, ContextID: contextID, AgentID: "echo", State: run.StateWorking, Attempt: 1, CreatedAt: at, UpdatedAt: at}
	err := f.create(ctx, s, &task, true, ev(2, "status", `"state":"submitted"`), ev(3, "status", `"state":"working"`))
	if err != nil {
		return err
	}
	err = f.checkpoint(ctx, s)
	if err != nil {
		return err
	}
	lease, err := s.AcquireLease(ctx, id, "replica", time.Minute)
	if err != nil {
		return err
	}
	task.State, task.Version = run.StateCompleted, 1
	task.Usage = model.TokenUsage{InputTokens: 2, OutputTokens: 2, TotalTokens: 4}
	err = s.Apply(ctx, store.Change{
		UpdateTask: &task,
		Messages:   []run.Message{{ContextID: contextID, TaskID: id, Message: reply}},
		Events: []run.Event{
			ev(4, "delta", `"actor":"echo","text":"hello world"`),
			ev(5, "status", `"state":"completed"`),
			ev(6, "run.end", `"state":"completed"`),
		},
		EventsValid: true,
	})
	if err != nil {
		return err
	}
	if err := s.ReleaseLease(ctx, lease); err != nil {
		return err
	}
	_, err = s.GetTask(ctx, id)
	return err
}

// BenchmarkSendRetained measures the store's part of one blocking send
// (sendRun) against a store already holding DefaultRetention finished
// runs, so that every send also pays for evicting one.
func BenchmarkSendRetained(b *testing.B) {
	s, ctx := memstore.New(), b.Context()
	n := 0
	for ; n < memstore.DefaultRetention; n++ {
		if err := sendRun(ctx, s, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		n++
		if err := sendRun(ctx, s, n); err != nil {
			b.Fatal(err)
		}
	}
}
