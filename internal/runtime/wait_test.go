package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/pgstore"
)

// countingStore counts transcript reads: by query (Last for a board's
// history, else a task's transcript).
type countingStore struct {
	store.Store
	history, transcripts atomic.Int64
}

func (c *countingStore) ListMessages(ctx context.Context, q run.MessageQuery) (run.MessagePage, error) {
	if q.Last > 0 {
		c.history.Add(1)
	} else {
		c.transcripts.Add(1)
	}
	return c.Store.ListMessages(ctx, q)
}

// viewStores runs test on memstore in both log modes and on PostgreSQL:
// what WaitView serves without reading must be what each store holds.
func viewStores(t *testing.T, test func(t *testing.T, newRuntime func(...*Agent) (*Runtime, *countingStore))) {
	mem := func(t *testing.T) func(...*Agent) (*Runtime, *countingStore) {
		return func(agents ...*Agent) (*Runtime, *countingStore) {
			st := &countingStore{Store: memstore.New()}
			r, err := New(Options{Store: inLogMode(st), Agents: agents, CancelGrace: 300 * time.Millisecond, FlushWindow: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Shutdown(ctxT(t)) })
			return r, st
		}
	}
	logModes(t, func(t *testing.T) { test(t, mem(t)) })
	t.Run("pgstore", func(t *testing.T) {
		pg, err := pgstore.Open(t.Context(), pgtest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pg.Close() })
		test(t, func(agents ...*Agent) (*Runtime, *countingStore) {
			st := &countingStore{Store: pg}
			r, err := New(Options{Store: st, Agents: agents, CancelGrace: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Shutdown(ctxT(t)) })
			return r, st
		})
	})
}

// gated runs its engine once it receives a token from release.
type gated struct {
	engine.Engine
	release <-chan struct{}
}

func (g gated) Capabilities() engine.Capabilities { return engine.CapabilitiesOf(g.Engine) }

func (g gated) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return b, ctx.Err()
	}
	return g.Engine.Execute(ctx, run, h, b)
}

// waiting is a context that tells when it is first asked for Done: a
// waiter of an execution asks in its select, once it found the execution.
type waiting struct {
	context.Context
	once   sync.Once
	asking chan struct{}
}

func (w *waiting) Done() <-chan struct{} {
	w.once.Do(func() { close(w.asking) })
	return w.Context.Done()
}

// checkViewWhileRunning is checkView on a run held by a gated engine: it
// releases the run once WaitView waits for its execution.
func checkViewWhileRunning(t *testing.T, r *Runtime, st *countingStore, release chan<- struct{}, taskID string) (run.Task, bool) {
	t.Helper()
	ctx := &waiting{Context: ctxT(t), asking: make(chan struct{})}
	go func() {
		<-ctx.asking
		release <- struct{}{}
	}()
	return checkViewCtx(t, ctx, r, st, taskID)
}

// checkView compares WaitView with the store's answer and reports whether
// it read the transcript.
func checkView(t *testing.T, r *Runtime, st *countingStore, taskID string) (task run.Task, read bool) {
	t.Helper()
	return checkViewCtx(t, ctxT(t), r, st, taskID)
}

func checkViewCtx(t *testing.T, ctx context.Context, r *Runtime, st *countingStore, taskID string) (task run.Task, read bool) {
	t.Helper()
	before := st.transcripts.Load()
	task, msgs, err := r.WaitView(ctx, taskID)
	if err != nil {
		t.Fatalf("WaitView(%s): %v", taskID, err)
	}
	read = st.transcripts.Load() != before
	stored, err := r.GetTask(ctxT(t), taskID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(task, stored) {
		t.Errorf("WaitView task %+v, stored %+v", task, stored)
	}
	page, err := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: task.ContextID, TaskID: task.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]model.Message, len(page.Messages))
	for i, m := range page.Messages {
		want[i] = m.Message
	}
	if !reflect.DeepEqual(msgs, want) {
		got, _ := json.Marshal(msgs)
		exp, _ := json.Marshal(want)
		t.Errorf("WaitView messages (read from the store: %v)\n%s\nthe store's\n%s", read, got, exp)
	}
	return task, read
}

// appending answers with msg.
func appending(msg model.Message) engine.Engine {
	return engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		b.AppendChannelMessage(engine.MainChannel, msg)
		return b, nil
	})
}

func TestWaitViewIsTheStoresAnswer(t *testing.T) {
	viewStores(t, func(t *testing.T, newRuntime func(...*Agent) (*Runtime, *countingStore)) {
		odd := model.NewText(model.RoleAssistant, "odd time")
		odd.CreatedAt = time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 7200))
		withData := model.NewText(model.RoleAssistant, "data")
		withData.Parts = append(withData.Parts, model.Part{Type: model.PartData, Data: json.RawMessage(`{"a": 1}`)})
		withMeta := model.NewText(model.RoleAssistant, "meta")
		withMeta.Metadata = map[string]any{"k": "v", "n": 1.5, "b": true, "z": nil}
		started := make(chan string, 1)
		failing := engine.EngineFunc(func(context.Context, engine.Run, engine.Host, *engine.Board) (*engine.Board, error) {
			return nil, errors.New("engine broke <here>")
		})
		release := make(chan struct{})
		g := func(id string, eng engine.Engine) *Agent { return testAgent(id, gated{eng, release}) }
		r, st := newRuntime(g("ok", answerer()), g("odd", appending(odd)), g("data", appending(withData)),
			g("meta", appending(withMeta)), g("fail", failing), g("ask", asker{}), testAgent("block", blocker(false, started)))

		for _, tc := range []struct {
			agent    string
			msg      model.Message
			state    run.TaskState
			wantRead bool
		}{
			{"ok", model.NewText(model.RoleUser, "hi"), run.StateCompleted, false},
			{"odd", model.NewText(model.RoleUser, "hi"), run.StateCompleted, false},
			{"meta", model.NewText(model.RoleUser, "hi"), run.StateCompleted, false},
			{"data", model.NewText(model.RoleUser, "hi"), run.StateCompleted, true},
			{"fail", model.NewText(model.RoleUser, "hi"), run.StateFailed, false},
			{"ok", model.NewText(model.RoleUser, "bad \xff utf-8"), run.StateCompleted, true},
			{"ok", model.Message{Role: model.RoleUser, Parts: []model.Part{model.TextPart("hi")}, Metadata: map[string]any{"deep": map[string]any{"n": 1}}}, run.StateCompleted, true},
		} {
			sub, err := r.Send(ctxT(t), SendRequest{AgentID: tc.agent, Message: tc.msg})
			if err != nil {
				t.Fatal(err)
			}
			task, read := checkViewWhileRunning(t, r, st, release, sub.Task.ID)
			if task.State != tc.state || read != tc.wantRead {
				t.Errorf("%s with %q: %s, transcript read %v; want %s, read %v", tc.agent, tc.msg.Text(), task.State, read, tc.state, tc.wantRead)
			}
		}

		// Parked for input, then continued (a second attempt: read).
		ask := send(t, r, "ask", "hi")
		if task, read := checkViewWhileRunning(t, r, st, release, ask.ID); task.State != run.StateInputRequired || read {
			t.Errorf("parked task %s, transcript read %v; want input-required served by the execution", task.State, read)
		}
		if _, err := r.Send(ctxT(t), SendRequest{AgentID: "ask", TaskID: ask.ID, Message: model.NewText(model.RoleUser, "Ada")}); err != nil {
			t.Fatal(err)
		}
		if task, read := checkViewWhileRunning(t, r, st, release, ask.ID); task.State != run.StateCompleted || !read {
			t.Errorf("continued task %s, transcript read %v; want completed, read", task.State, read)
		}

		// Canceled while running.
		blocked := send(t, r, "block", "hi")
		<-started
		if _, err := r.Cancel(ctxT(t), blocked.ID); err != nil {
			t.Fatal(err)
		}
		if task, _ := checkView(t, r, st, blocked.ID); task.State != run.StateCanceled {
			t.Errorf("canceled task is %s", task.State)
		}

		// No longer executing here: read.
		done := send(t, r, "ok", "hi")
		release <- struct{}{}
		checkView(t, r, st, done.ID)
		if _, read := checkView(t, r, st, done.ID); !read {
			t.Error("a task that ended before WaitView was served without reading the transcript")
		}
	})
}

// A task queued and canceled before it ran, and a task waited for on a
// replica that does not execute it, are read from the store.
func TestWaitViewOfTasksNotRunHere(t *testing.T) {
	started := make(chan string, 2)
	a := testAgent("q", blocker(false, started))
	a.Multitask = MultitaskEnqueue
	st := &countingStore{Store: memstore.New()}
	r := newTestRuntime(t, st, a)
	first := send(t, r, "q", "one")
	<-started
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "q", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
	if err != nil {
		t.Fatal(err)
	}
	views := make(chan run.Task, 1)
	go func() {
		task, _, _ := r.WaitView(ctxT(t), sub.Task.ID)
		views <- task
	}()
	if _, err := r.Cancel(ctxT(t), sub.Task.ID); err != nil {
		t.Fatal(err)
	}
	if task := <-views; task.State != run.StateCanceled {
		t.Fatalf("WaitView of a canceled queued task: %s", task.State)
	}
	if task, read := checkView(t, r, st, sub.Task.ID); task.State != run.StateCanceled || !read {
		t.Fatalf("queued task %s, read %v", task.State, read)
	}
	_, _ = r.Cancel(ctxT(t), first.ID)
	wait(t, r, first.ID)

	other := newTestRuntime(t, st, testAgent("q", blocker(false, nil)))
	if task, read := checkView(t, other, st, first.ID); task.State != run.StateCanceled || !read {
		t.Fatalf("task of another replica %s, read %v", task.State, read)
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	started := make(chan string, 1)
	r := newTestRuntime(t, nil, testAgent("b", blocker(false, started)))
	task := send(t, r, "b", "x")
	<-started
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if _, err := r.Wait(ctx, task.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a canceled context: %v", err)
	}
	_, _ = r.Cancel(ctxT(t), task.ID)
	wait(t, r, task.ID)
}

// The board of a task that opened its context starts from exactly what
// the store holds for the context, without reading it; one in an existing
// context reads it.
func TestHistoryOfANewContext(t *testing.T) {
	viewStores(t, func(t *testing.T, newRuntime func(...*Agent) (*Runtime, *countingStore)) {
		boards := make(chan []model.Message, 1)
		eng := engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
			boards <- b.Channel(engine.MainChannel)
			b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "ok"))
			return b, nil
		})
		r, st := newRuntime(testAgent("a", eng))
		user := model.NewText(model.RoleUser, "hi")
		user.CreatedAt = time.Date(2025, 1, 2, 3, 4, 5, 999999999, time.Local)
		for _, tc := range []struct {
			msg      model.Message
			wantRead bool
		}{
			{model.NewText(model.RoleUser, "hi"), false},
			{user, false},
			{model.NewText(model.RoleUser, "bad \xff utf-8"), true},
		} {
			before := st.history.Load()
			sub, err := r.Send(ctxT(t), SendRequest{AgentID: "a", Message: tc.msg})
			if err != nil {
				t.Fatal(err)
			}
			board := <-boards
			wait(t, r, sub.Task.ID)
			if read := st.history.Load() != before; read != tc.wantRead {
				t.Errorf("message %q: history read %v, want %v", tc.msg.Text(), read, tc.wantRead)
			}
			page, err := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: sub.Task.ContextID, TaskID: sub.Task.ID, Limit: 1})
			if err != nil || len(page.Messages) != 1 {
				t.Fatalf("transcript: %v %v", page.Messages, err)
			}
			if !reflect.DeepEqual(board, []model.Message{page.Messages[0].Message}) {
				t.Errorf("board started from %+v, the store holds %+v", board, page.Messages[0].Message)
			}
		}
		first := send(t, r, "a", "one")
		<-boards
		wait(t, r, first.ID)
		before := st.history.Load()
		sub, err := r.Send(ctxT(t), SendRequest{AgentID: "a", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
		if err != nil {
			t.Fatal(err)
		}
		if board := <-boards; len(board) != 3 || st.history.Load() == before {
			t.Errorf("second task of a context started from %d messages (history read: %v), want 3 read from the store", len(board), st.history.Load() != before)
		}
		wait(t, r, sub.Task.ID)
	})
}

// gatedTaskStore holds the first GetTask of one task until release closes.
type gatedTaskStore struct {
	store.Store
	taskID  atomic.Value // string
	reading chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gatedTaskStore) GetTask(ctx context.Context, id string) (run.Task, error) {
	if want, _ := g.taskID.Load().(string); want == id {
		held := false
		g.once.Do(func() { held = true })
		if held {
			close(g.reading)
			<-g.release
		}
	}
	return g.Store.GetTask(ctx, id)
}

// askedContext reports the first call of its Done: wait asks for it only
// once it has found the execution it waits on.
type askedContext struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *askedContext) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

// A run that ended here answers its waiter without a read of the store —
// its final commit answered the task as stored, and a terminal task
// changes no more — so the answer stands even when the store's retention
// forgets the run right after (it takes many runs ending meanwhile; here a
// retention of one). A read of the ended run would block the waiter.
func TestWaitViewAnswersARunForgottenMeanwhile(t *testing.T) {
	logModes(t, func(t *testing.T) {
		st := &gatedTaskStore{Store: memstore.New(memstore.WithRetention(1)), reading: make(chan struct{}), release: make(chan struct{})}
		gate := make(chan struct{})
		r := newTestRuntime(t, st, testAgent("s", streamer(2, gate)))
		first := send(t, r, "s", "one")
		st.taskID.Store(first.ID)
		type answer struct {
			task run.Task
			msgs []model.Message
			err  error
		}
		got := make(chan answer, 1)
		ctx := &askedContext{Context: ctxT(t), asked: make(chan struct{})}
		go func() {
			task, msgs, err := r.WaitView(ctx, first.ID)
			got <- answer{task, msgs, err}
		}()
		<-ctx.asked // the waiter waits on the first run's execution
		close(gate)
		var a answer
		select {
		case a = <-got:
		case <-st.reading:
			t.Fatal("the waiter read the ended run back from the store")
		}
		second := send(t, r, "s", "two")
		if done := wait(t, r, second.ID); done.State != run.StateCompleted {
			t.Fatalf("second run %s", done.State)
		}
		if _, err := st.Store.GetTask(ctxT(t), first.ID); !errdefs.IsNotFound(err) {
			t.Fatalf("the first run is still stored; the test needs it forgotten (err %v)", err)
		}
		if a.err != nil || a.task.ID != first.ID || a.task.State != run.StateCompleted {
			t.Fatalf("WaitView = %+v, %v; want the completed first run", a.task, a.err)
		}
		if len(a.msgs) != 2 || a.msgs[0].Text() != "one" {
			t.Fatalf("WaitView messages %+v, want the question and the answer", a.msgs)
		}
	})
}
