package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store/memstore"
)

func TestSendCompletesAndFramesTheAttempt(t *testing.T) {
	logModes(t, testSendCompletesAndFramesTheAttempt)
}

func testSendCompletesAndFramesTheAttempt(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("s", streamer(5, nil)))
	task := send(t, r, "s", "hi")
	if task.State != run.StateWorking || task.Attempt != 1 || task.ContextID == "" || task.Version != 1 {
		t.Fatalf("Send returned %+v, want a task created working, in attempt 1, with a context", task)
	}
	done := wait(t, r, task.ID)
	if done.State != run.StateCompleted {
		t.Fatalf("state %s (%+v), want completed", done.State, done.Error)
	}
	evs := readAll(t, r, task.ID, 0, false)
	checkDense(t, evs, 0)
	if evs[0].Type != EventRunStart || evs[len(evs)-1].Type != EventRunEnd {
		t.Fatalf("events %v: want run.start first and run.end last", types(evs))
	}
	starts, ends := 0, 0
	var states []string
	for _, ev := range evs {
		switch ev.Type {
		case EventRunStart:
			starts++
		case EventRunEnd:
			ends++
		case EventStatus:
			var s StatusData
			if err := json.Unmarshal(ev.Data, &s); err != nil {
				t.Fatal(err)
			}
			states = append(states, string(s.State))
		}
	}
	if starts != 1 || ends != 1 {
		t.Fatalf("events %v: want exactly one run.start and one run.end", types(evs))
	}
	// Created working, the task's log still reports submitted first, and the
	// two statuses sit in the creating commit together.
	if got := strings.Join(states, " "); got != "submitted working completed" {
		t.Fatalf("status events %q, want submitted working completed", got)
	}
	if evs[1].Type != EventStatus || evs[2].Type != EventStatus {
		t.Fatalf("events %v: want run.start, then the submitted and working statuses", types(evs))
	}
	page, err := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: task.ContextID})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 2 || page.Messages[0].Role != model.RoleUser || page.Messages[1].Text() != "tok1 tok2 tok3 tok4 tok5 " {
		t.Fatalf("transcript %+v: want the user message and the answer", page.Messages)
	}
}

// Invariant 6: when Wait returns, the terminal state, the transcript and
// run.end are already in the store.
func TestTerminalStateDurableBeforeReturn(t *testing.T) {
	logModes(t, testTerminalStateDurableBeforeReturn)
}

func testTerminalStateDurableBeforeReturn(t *testing.T) {
	st := memstore.New()
	r := newTestRuntime(t, st, testAgent("s", streamer(50, nil)))
	task := send(t, r, "s", "hi")
	wait(t, r, task.ID)
	page, err := st.ReadEvents(ctxT(t), task.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(page.Events); n == 0 || page.Events[n-1].Type != EventRunEnd {
		t.Fatalf("store holds %v: run.end must be durable when Wait returns", types(page.Events))
	}
	stored, _ := st.GetTask(ctxT(t), task.ID)
	if stored.State != run.StateCompleted {
		t.Fatalf("stored state %s, want completed", stored.State)
	}
}

// Invariant 5: the run goes on when the request that started it is gone.
func TestRunDoesNotDependOnTheRequest(t *testing.T) {
	gate := make(chan struct{})
	r := newTestRuntime(t, nil, testAgent("s", streamer(3, gate)))
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := r.Send(ctx, SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, "x")})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	close(gate)
	if got := wait(t, r, sub.Task.ID); got.State != run.StateCompleted {
		t.Fatalf("state %s, want completed after the request context ended", got.State)
	}
}

// Invariant 3: reconnecting at random points yields every event exactly once,
// in order, replayed then live.
func TestReconnectAtRandomPointsGetsEveryEventOnce(t *testing.T) {
	logModes(t, testReconnectAtRandomPointsGetsEveryEventOnce)
}

func testReconnectAtRandomPointsGetsEveryEventOnce(t *testing.T) {
	const tokens = 3000
	gate := make(chan struct{}, tokens)
	r := newTestRuntime(t, nil, testAgent("s", streamer(tokens, gate)))
	task := send(t, r, "s", "go")
	go func() {
		for i := 0; i < tokens; i++ {
			gate <- struct{}{}
			if i%97 == 0 {
				time.Sleep(time.Millisecond) // let readers catch up, then fall behind again
			}
		}
	}()
	var wg sync.WaitGroup
	for reader := 0; reader < 4; reader++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, seed))
			var got []run.Event
			var after int64
			for {
				st, err := r.OpenStream(ctxT(t), task.ID, after)
				if err != nil {
					t.Errorf("reopen after %d: %v", after, err)
					return
				}
				budget := 1 + rng.IntN(400) // read this many, then "disconnect"
				ended := false
				for budget > 0 && !ended {
					evs, err := st.Next(ctxT(t), 1+rng.IntN(50), time.Second)
					if err != nil {
						ended = true
						break
					}
					for _, ev := range evs {
						got = append(got, ev)
						after = ev.Seq
						budget--
						if ev.Type == EventRunEnd {
							ended = true
						}
					}
				}
				st.Close()
				if ended {
					break
				}
			}
			checkDense(t, got, 0)
			if got[len(got)-1].Type != EventRunEnd {
				t.Errorf("reader ended at %s, want run.end", got[len(got)-1].Type)
			}
		}(uint64(reader) + 1)
	}
	wg.Wait()
}

// Invariant 4: a subscriber that stops reading neither slows the run nor
// loses anything; it catches up from the store.
func TestStalledSubscriberCatchesUpFromStore(t *testing.T) {
	logModes(t, testStalledSubscriberCatchesUpFromStore)
}

func testStalledSubscriberCatchesUpFromStore(t *testing.T) {
	const tokens = 3 * runlog.MemoryTail
	r := newTestRuntime(t, nil, testAgent("s", streamer(tokens, nil)))
	task := send(t, r, "s", "go")
	st, err := r.OpenStream(ctxT(t), task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first, err := st.Next(ctxT(t), 1, time.Second) // read one event, then stall
	if err != nil || len(first) != 1 {
		t.Fatalf("first read: %v %v", first, err)
	}
	if got := wait(t, r, task.ID); got.State != run.StateCompleted {
		t.Fatalf("the run did not complete while a subscriber stalled: %s", got.State)
	}
	// Make sure memory was trimmed, so catching up needs the store.
	base, _ := st.Memory()
	if base <= 1 {
		t.Fatalf("memory log still starts at %d; the test needs it trimmed", base)
	}
	rest := first
	for {
		evs, err := st.Next(ctxT(t), 100, time.Second)
		if err != nil {
			break
		}
		rest = append(rest, evs...)
		if evs[len(evs)-1].Type == EventRunEnd {
			break
		}
	}
	checkDense(t, rest, 0)
	if len(rest) < tokens {
		t.Fatalf("caught up %d events, want at least %d", len(rest), tokens)
	}
}

func TestOpenStreamBeyondTheEnd(t *testing.T) { logModes(t, testOpenStreamBeyondTheEnd) }

func testOpenStreamBeyondTheEnd(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("s", streamer(1, nil)))
	task := send(t, r, "s", "x")
	wait(t, r, task.ID)
	_, err := r.OpenStream(ctxT(t), task.ID, 999)
	if !errdefs.IsValidation(err) {
		t.Fatalf("OpenStream after 999: %v, want a validation error", err)
	}
	if _, err := r.OpenStream(ctxT(t), "nope", 0); !errdefs.IsNotFound(err) {
		t.Fatalf("OpenStream of an unknown run: %v, want NotFound", err)
	}
	// At the end of a terminal run the stream ends at once.
	if evs := readAll(t, r, task.ID, lastSeq(t, r, task.ID), false); len(evs) != 0 {
		t.Fatalf("stream after the last event returned %v", types(evs))
	}
}

func lastSeq(t *testing.T, r *Runtime, id string) int64 {
	page, err := r.ReadEvents(ctxT(t), id, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return page.LastSeq
}

func TestInputRequiredParksAndResumes(t *testing.T) { logModes(t, testInputRequiredParksAndResumes) }

func testInputRequiredParksAndResumes(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("a", asker{}))
	task := send(t, r, "a", "hi")
	parked := wait(t, r, task.ID)
	if parked.State != run.StateInputRequired || parked.StatusMessage == nil || parked.StatusMessage.Text() != "what is your name?" {
		t.Fatalf("parked as %s with %+v, want input-required with the question", parked.State, parked.StatusMessage)
	}
	r.mu.Lock()
	running := len(r.runs)
	r.mu.Unlock()
	if running != 0 {
		t.Fatalf("%d executions alive while parked; the goroutine must be released", running)
	}
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: model.NewText(model.RoleUser, "Ada")})
	if err != nil {
		t.Fatal(err)
	}
	if sub.StartSeq == 0 {
		t.Fatal("a resumed attempt must say where its events start")
	}
	done := wait(t, r, task.ID)
	if done.State != run.StateCompleted || done.Attempt != 2 {
		t.Fatalf("after the answer: %s attempt %d, want completed attempt 2", done.State, done.Attempt)
	}
	evs := readAll(t, r, task.ID, 0, false)
	checkDense(t, evs, 0)
	var seq []string
	for _, ev := range evs {
		if ev.Type == EventRunStart || ev.Type == EventRunEnd || ev.Type == EventInput {
			seq = append(seq, ev.Type)
		}
	}
	if want := []string{"run.start", "input", "run.end", "run.start", "run.end"}; !equal(seq, want) {
		t.Fatalf("lifecycle %v, want %v", seq, want)
	}
	page, _ := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: task.ContextID})
	var texts []string
	for _, m := range page.Messages {
		texts = append(texts, string(m.Role)+":"+m.Text())
	}
	if want := []string{"user:hi", "assistant:what is your name?", "user:Ada", "assistant:hello Ada"}; !equal(texts, want) {
		t.Fatalf("transcript %v, want %v", texts, want)
	}
	// A terminal task takes no more messages.
	_, err = r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: model.NewText(model.RoleUser, "again")})
	if !errors.Is(err, ErrTaskTerminal) {
		t.Fatalf("message to a completed task: %v, want ErrTaskTerminal", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCancelIsCooperativeAndIdempotent(t *testing.T) {
	logModes(t, testCancelIsCooperativeAndIdempotent)
}

func testCancelIsCooperativeAndIdempotent(t *testing.T) {
	started := make(chan string, 1)
	r := newTestRuntime(t, nil, testAgent("b", blocker(false, started)), testAgent("s", streamer(1, nil)))
	task := send(t, r, "b", "x")
	<-started
	if _, err := r.Cancel(ctxT(t), task.ID); err != nil {
		t.Fatal(err)
	}
	got := wait(t, r, task.ID)
	if got.State != run.StateCanceled {
		t.Fatalf("state %s, want canceled", got.State)
	}
	again, err := r.Cancel(ctxT(t), task.ID)
	if err != nil || again.State != run.StateCanceled {
		t.Fatalf("second cancel: %v %s, want the canceled task", err, again.State)
	}
	done := send(t, r, "s", "y")
	wait(t, r, done.ID)
	if _, err := r.Cancel(ctxT(t), done.ID); !errors.Is(err, ErrNotCancelable) {
		t.Fatalf("cancel of a completed task: %v, want ErrNotCancelable", err)
	}
}

func TestHardCancelAfterGrace(t *testing.T) {
	started := make(chan string, 1)
	r := newTestRuntime(t, nil, testAgent("b", blocker(true, started)))
	task := send(t, r, "b", "x")
	<-started
	if _, err := r.Cancel(ctxT(t), task.ID); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, r, task.ID); got.State != run.StateCanceled {
		t.Fatalf("state %s, want canceled after the grace period", got.State)
	}
}

// Canceling a task that waits for input is an attempt of its own, so the
// log ends with run.end and every attempt is framed (DESIGN §4.2).
func TestCancelWhileWaitingForInput(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("a", asker{}))
	task := send(t, r, "a", "hi")
	wait(t, r, task.ID)
	parkedEnd := lastSeq(t, r, task.ID)
	got, err := r.Cancel(ctxT(t), task.ID)
	if err != nil || got.State != run.StateCanceled || got.Attempt != 2 {
		t.Fatalf("cancel of a parked task: %v, %s attempt %d; want canceled in attempt 2", err, got.State, got.Attempt)
	}
	evs := readAll(t, r, task.ID, parkedEnd, true)
	if got := strings.Join(types(evs), " "); got != "run.start status run.end" {
		t.Fatalf("after the parked attempt: %s, want run.start status run.end", got)
	}
	if !strings.Contains(string(evs[0].Data), `"resumed":"cancel"`) || !strings.Contains(string(evs[2].Data), `"state":"canceled"`) {
		t.Fatalf("cancel attempt %s … %s", evs[0].Data, evs[2].Data)
	}
	if all := storedEvents(t, r.st, task.ID); !framed(all) {
		t.Fatalf("log not framed: %v", types(all))
	}
}

func TestMultitaskPolicies(t *testing.T) { logModes(t, testMultitaskPolicies) }

func testMultitaskPolicies(t *testing.T) {
	t.Run("reject", func(t *testing.T) {
		started := make(chan string, 1)
		r := newTestRuntime(t, nil, testAgent("b", blocker(false, started)))
		first := send(t, r, "b", "one")
		<-started
		_, err := r.Send(ctxT(t), SendRequest{AgentID: "b", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
		if !errdefs.IsConflict(err) {
			t.Fatalf("second message to a busy context: %v, want Conflict", err)
		}
		_, _ = r.Cancel(ctxT(t), first.ID)
	})
	t.Run("enqueue", func(t *testing.T) {
		gate := make(chan struct{})
		a := testAgent("q", streamer(1, gate))
		a.Multitask = MultitaskEnqueue
		r := newTestRuntime(t, nil, a)
		first := send(t, r, "q", "one")
		sub, err := r.Send(ctxT(t), SendRequest{AgentID: "q", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
		if err != nil {
			t.Fatal(err)
		}
		close(gate)
		if a, b := wait(t, r, first.ID), wait(t, r, sub.Task.ID); a.State != run.StateCompleted || b.State != run.StateCompleted {
			t.Fatalf("states %s, %s: want both completed", a.State, b.State)
		}
		if a, b := wait(t, r, first.ID), wait(t, r, sub.Task.ID); !a.UpdatedAt.Before(b.UpdatedAt) && !a.UpdatedAt.Equal(b.UpdatedAt) {
			t.Fatal("the queued task finished before the first one")
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		started := make(chan string, 2)
		a := testAgent("i", blocker(false, started))
		a.Multitask = MultitaskInterrupt
		r := newTestRuntime(t, nil, a)
		first := send(t, r, "i", "one")
		<-started
		sub, err := r.Send(ctxT(t), SendRequest{AgentID: "i", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
		if err != nil {
			t.Fatal(err)
		}
		if got := wait(t, r, first.ID); got.State != run.StateCanceled {
			t.Fatalf("interrupted task is %s, want canceled", got.State)
		}
		<-started // the second one runs now
		_, _ = r.Cancel(ctxT(t), sub.Task.ID)
		wait(t, r, sub.Task.ID)
	})
}

func TestDuplicateMessageIDStartsNothing(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("s", streamer(1, nil)))
	msg := model.NewText(model.RoleUser, "x")
	msg.ID = "client-msg-1"
	first, err := r.Send(ctxT(t), SendRequest{AgentID: "s", ContextID: "c1", Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, r, first.Task.ID)
	second, err := r.Send(ctxT(t), SendRequest{AgentID: "s", ContextID: "c1", Message: msg})
	if err != nil || !second.Duplicate || second.Task.ID != first.Task.ID {
		t.Fatalf("resend: %+v %v, want the first task back as a duplicate", second, err)
	}
	page, _ := r.ListTasks(ctxT(t), run.TaskQuery{ContextID: "c1"})
	if page.Total != 1 {
		t.Fatalf("%d tasks in the context, want 1", page.Total)
	}
}

func TestBudgetExceededFailsTheRun(t *testing.T) {
	eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
		for i := 0; i < 10; i++ {
			if err := h.ReportUsage(ctx, "m", model.TokenUsage{InputTokens: 40, OutputTokens: 10}); err != nil {
				return b, err
			}
		}
		return b, nil
	})
	a := testAgent("u", eng)
	a.MaxTokensPerRun = 120
	r := newTestRuntime(t, nil, a)
	got := wait(t, r, send(t, r, "u", "x").ID)
	if got.State != run.StateFailed || got.Error == nil || got.Error.Class != string(errdefs.ClassBudgetExceeded) {
		t.Fatalf("state %s error %+v, want failed with budget_exceeded", got.State, got.Error)
	}
	if got.Usage.TotalTokens != 150 {
		t.Fatalf("usage %+v, want 150 tokens recorded", got.Usage)
	}
	checkFailedEnd(t, r, got.ID) // run.end last, once, with the error
}

func TestValidationFailureRejects(t *testing.T) {
	eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		return b, errdefs.Validationf("cannot do that")
	})
	r := newTestRuntime(t, nil, testAgent("v", eng))
	got := wait(t, r, send(t, r, "v", "x").ID)
	if got.State != run.StateRejected || got.StatusMessage == nil {
		t.Fatalf("state %s, want rejected with a reason", got.State)
	}
	evs := readAll(t, r, got.ID, 0, false)
	if evs[len(evs)-1].Type != EventRunEnd {
		t.Fatalf("an engine that publishes nothing still gets run.end last: %v", types(evs))
	}
}

func TestSendValidation(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("s", streamer(1, nil)))
	cases := []struct {
		name string
		req  SendRequest
		want func(error) bool
	}{
		{"unknown agent", SendRequest{AgentID: "nope", Message: model.NewText(model.RoleUser, "x")}, errdefs.IsNotFound},
		{"no parts", SendRequest{AgentID: "s", Message: model.Message{Role: model.RoleUser}}, errdefs.IsValidation},
		{"assistant role", SendRequest{AgentID: "s", Message: model.NewText(model.RoleAssistant, "x")}, errdefs.IsValidation},
		{"empty text part", SendRequest{AgentID: "s", Message: model.Message{Parts: []model.Part{{Type: model.PartText}}}}, errdefs.IsValidation},
		{"unknown task", SendRequest{AgentID: "s", TaskID: "nope", Message: model.NewText(model.RoleUser, "x")}, errdefs.IsNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.Send(ctxT(t), c.req)
			if !c.want(err) {
				t.Fatalf("got %v (class %s)", err, errdefs.ClassOf(err))
			}
		})
	}
	page, _ := r.ListTasks(ctxT(t), run.TaskQuery{})
	if page.Total != 0 {
		t.Fatalf("%d tasks created by invalid requests", page.Total)
	}
}

func TestShutdownDrains(t *testing.T) { logModes(t, testShutdownDrains) }

func testShutdownDrains(t *testing.T) {
	started := make(chan string, 1)
	r, err := New(Options{Store: memstore.New(), Agents: []*Agent{testAgent("b", blocker(false, started))}, CancelGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	task := send(t, r, "b", "x")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Send(ctxT(t), SendRequest{AgentID: "b", Message: model.NewText(model.RoleUser, "y")}); !errors.Is(err, ErrDraining) {
		t.Fatalf("send after shutdown: %v, want ErrDraining", err)
	}
	got, _ := r.GetTask(ctxT(t), task.ID)
	if got.State != run.StateWorking {
		t.Fatalf("a run interrupted by shutdown is %s; it must stay working so it can be resumed", got.State)
	}
}
