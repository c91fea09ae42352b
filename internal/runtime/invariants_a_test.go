package runtime

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// These tests defend DESIGN §4 invariants 1 and 2 (dense seqs; run.start
// first and run.end last of every attempt, exactly once) on the exit paths
// that a mutation review found undefended: a drain, concurrent cancels, an
// interrupt that lands before AskUser, and the error and cancel endings.

// evFrame is what the framing events say: run.start, status and run.end
// bodies share these members.
type evFrame struct {
	State   run.TaskState  `json:"state"`
	Attempt int            `json:"attempt"`
	Resumed string         `json:"resumed"`
	Error   *run.TaskError `json:"error"`
}

func evFrameOf(t *testing.T, ev run.Event) evFrame {
	t.Helper()
	var f evFrame
	if err := json.Unmarshal(ev.Data, &f); err != nil {
		t.Fatalf("event %d (%s) data %s: %v", ev.Seq, ev.Type, ev.Data, err)
	}
	return f
}

// checkAttemptsFramed asserts invariants 1 and 2 over a run's whole log: dense
// seqs from 1, every attempt opened by one run.start (attempts numbered
// 1, 2, …) and closed by one run.end, and the log's last event a run.end
// that carries final. It returns the log's run.end events.
func checkAttemptsFramed(t *testing.T, evs []run.Event, final run.TaskState) []run.Event {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("empty log")
	}
	checkDense(t, evs, 0)
	if !framed(evs) {
		t.Fatalf("log not framed (run.start … run.end per attempt, run.end last): %v", types(evs))
	}
	var starts, ends []run.Event
	for _, ev := range evs {
		switch ev.Type {
		case EventRunStart:
			starts = append(starts, ev)
			if got := evFrameOf(t, ev).Attempt; got != len(starts) {
				t.Errorf("run.start at seq %d opens attempt %d, want %d", ev.Seq, got, len(starts))
			}
		case EventRunEnd:
			ends = append(ends, ev)
		}
	}
	if len(starts) != len(ends) {
		t.Fatalf("%d run.start and %d run.end: %v", len(starts), len(ends), types(evs))
	}
	if got := evFrameOf(t, evs[len(evs)-1]).State; got != final {
		t.Fatalf("last run.end says %s, want %s: %s", got, final, evs[len(evs)-1].Data)
	}
	return ends
}

// countStatus counts the status events of evs that say state.
func countStatus(t *testing.T, evs []run.Event, state run.TaskState) int {
	t.Helper()
	n := 0
	for _, ev := range evs {
		if ev.Type == EventStatus && evFrameOf(t, ev).State == state {
			n++
		}
	}
	return n
}

// A drained attempt ends with its own run.end (state working, no error: it
// was not aborted), and the replica that takes it over opens attempt 2 with
// run.start resumed "crash"; the whole log is dense and framed.
func TestDrainFramesTheHandedOverAttempt(t *testing.T) {
	sharedStores(t, testDrainFramesTheHandedOverAttempt)
}

func testDrainFramesTheHandedOverAttempt(t *testing.T, shared store.Store) {
	started := make(chan int, 4)
	a := replica(t, shared, "A", counter{n: 3, step: make(chan struct{}), started: started})
	task := send(t, a, "c", "x")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = a.Shutdown(ctx) // the attempt is interrupted (host_shutdown) and handed over

	drained := storedEvents(t, shared, task.ID)
	if n := len(drained); n == 0 || drained[n-1].Type != EventRunEnd {
		t.Fatalf("after the drain the log is %v, want it to end with the drained attempt's run.end", types(drained))
	}
	if f := evFrameOf(t, drained[len(drained)-1]); f.State != run.StateWorking || f.Error != nil {
		t.Fatalf("drained attempt's run.end %s, want state working and no error", drained[len(drained)-1].Data)
	}
	if got, _ := shared.GetTask(ctxT(t), task.ID); got.State != run.StateWorking {
		t.Fatalf("drained task is %s, want working", got.State)
	}

	b, err := New(Options{Store: shared, Agents: []*Agent{testAgent("c", counter{n: 3, started: started})}, ReplicaID: "B", LeaseTTL: time.Minute, SweepEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Shutdown(context.Background()) }()
	<-started
	if done := wait(t, b, task.ID); done.State != run.StateCompleted || done.Attempt != 2 {
		t.Fatalf("state %s attempt %d, want completed in attempt 2", done.State, done.Attempt)
	}
	evs := storedEvents(t, shared, task.ID)
	ends := checkAttemptsFramed(t, evs, run.StateCompleted)
	if len(ends) != 2 {
		t.Fatalf("%d attempts, want 2: %v", len(ends), types(evs))
	}
	first := ends[0]
	if f := evFrameOf(t, first); f.State != run.StateWorking || f.Error != nil {
		t.Errorf("attempt 1 ends with %s, want state working and no error", first.Data)
	}
	next := evs[first.Seq] // the event after attempt 1's run.end (seqs are dense from 1)
	if f := evFrameOf(t, next); next.Type != EventRunStart || f.Attempt != 2 || f.Resumed != engine.SignalCrash {
		t.Errorf("after attempt 1: %s %s, want run.start of attempt 2 resumed %q", next.Type, next.Data, engine.SignalCrash)
	}
}

// cancelTwice cancels taskID while another cancel of it is held inside
// the store (at its lease acquisition): the second cancel is answered at
// once, without error, and then both succeed.
func cancelTwice(t *testing.T, r *Runtime, h *hooked, taskID string) {
	t.Helper()
	release, first := cancelHeld(t, r, h, taskID) // it holds the task's canceling mark
	_, err := r.Cancel(ctxT(t), taskID)
	release()
	if err != nil {
		t.Errorf("a cancel while another is in progress: %v, want it accepted (cancel is idempotent)", err)
	}
	fr := <-first
	if fr.err != nil || fr.t.State != run.StateCanceled {
		t.Fatalf("first cancel answered %s %v, want canceled", fr.t.State, fr.err)
	}
	again, err := r.Cancel(ctxT(t), taskID)
	if err != nil || again.State != run.StateCanceled {
		t.Fatalf("cancel after both: %s %v, want the canceled task", again.State, err)
	}
}

// cancelOnCleanup cancels a task that blocks until canceled when the test
// ends, before its runtime shuts down: a test that fails early then ends
// at once instead of waiting out the drain.
func cancelOnCleanup(t *testing.T, r *Runtime, taskID string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, _ = r.Cancel(ctx, taskID)
	})
}

// Two cancels of a task that waits for input: both succeed, and the log
// holds one cancel attempt (run.start resumed "cancel", status canceled,
// run.end) and one canceled status.
func TestConcurrentCancelOfAParkedTask(t *testing.T) {
	h := &hooked{Store: memstore.New()}
	r := newTestRuntime(t, h, testAgent("a", asker{}))
	task := send(t, r, "a", "hi")
	if got := wait(t, r, task.ID); got.State != run.StateInputRequired {
		t.Fatalf("state %s, want input-required", got.State)
	}
	cancelTwice(t, r, h, task.ID)
	got, _ := h.GetTask(ctxT(t), task.ID)
	evs := storedEvents(t, h, task.ID)
	checkAttemptsFramed(t, evs, run.StateCanceled)
	if n := countStatus(t, evs, run.StateCanceled); n != 1 || got.State != run.StateCanceled || got.Attempt != 2 {
		t.Fatalf("task %s attempt %d, %d canceled statuses in %v: want canceled once, in attempt 2", got.State, got.Attempt, n, types(evs))
	}
	n := len(evs)
	if evs[n-3].Type != EventRunStart || evFrameOf(t, evs[n-3]).Resumed != ResumedByCancel || evs[n-2].Type != EventStatus {
		t.Fatalf("cancel attempt %v (%s), want run.start resumed %q, status, run.end", types(evs[n-3:]), evs[n-3].Data, ResumedByCancel)
	}
}

// Two cancels of a task queued behind a running one: both succeed, the
// queued task ends canceled with one canceled status, and its only attempt
// (opened at submission) is closed.
func TestConcurrentCancelOfAQueuedTask(t *testing.T) {
	h := &hooked{Store: memstore.New()}
	r, running, queued, started := queueBehind(t, h)
	cancelTwice(t, r, h, queued.ID)
	evs := storedEvents(t, h, queued.ID)
	ends := checkAttemptsFramed(t, evs, run.StateCanceled)
	if n := countStatus(t, evs, run.StateCanceled); n != 1 || len(ends) != 1 {
		t.Fatalf("%d canceled statuses, %d attempts in %v: want one of each", n, len(ends), types(evs))
	}
	if _, err := r.Cancel(ctxT(t), running.ID); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, r, running.ID); got.State != run.StateCanceled {
		t.Fatalf("running task %s, want canceled", got.State)
	}
	select {
	case id := <-started:
		t.Fatalf("the canceled queued task %s started", id)
	default:
	}
}

// queueBehind starts a blocking task of an enqueueing agent on st (nil: a
// fresh memstore) and queues a second one behind it in its context; started
// receives the id of each task that starts.
func queueBehind(t *testing.T, st store.Store) (r *Runtime, running, queued run.Task, started chan string) {
	t.Helper()
	started = make(chan string, 2)
	ag := testAgent("q", blocker(false, started))
	ag.Multitask = MultitaskEnqueue
	r = newTestRuntime(t, st, ag)
	running = send(t, r, "q", "one")
	cancelOnCleanup(t, r, running.ID)
	<-started
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "q", ContextID: running.ContextID, Message: model.NewText(model.RoleUser, "two")})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Task.State != run.StateSubmitted {
		t.Fatalf("second task %s, want queued (submitted)", sub.Task.State)
	}
	return r, running, sub.Task, started
}

// askAfterInterrupt waits for an interrupt, then asks the user: the
// question comes after a cancel (or a newer message) was already pending.
// asked receives the run's id once AskUser has answered.
type askAfterInterrupt struct{ started, asked chan<- string }

func (askAfterInterrupt) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsUserPrompt: true}
}

func (e askAfterInterrupt) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
	e.started <- run.ID
	select {
	case <-h.Interrupts():
	case <-ctx.Done():
		return b, ctx.Err()
	}
	_, err := h.AskUser(ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("still there?")}})
	e.asked <- run.ID
	return b, err
}

// checkNeverParked asserts the task ended canceled and its log never
// said it waited for input.
func checkNeverParked(t *testing.T, r *Runtime, taskID string) {
	t.Helper()
	got := wait(t, r, taskID)
	evs := storedEvents(t, r.st, taskID)
	if got.State != run.StateCanceled {
		t.Errorf("task %s, want canceled: the stop landed before the question", got.State)
	}
	for _, ev := range evs {
		if ev.Type == EventInput || ev.Type == EventStatus && evFrameOf(t, ev).State == run.StateInputRequired {
			t.Errorf("log %v holds %s %s: a stopped run must not park", types(evs), ev.Type, ev.Data)
		}
	}
	checkAttemptsFramed(t, evs, run.StateCanceled)
}

// A cancel that lands before the engine asks the user cancels the run: it
// does not park in input-required first.
func TestCancelBeforeAskUserCancels(t *testing.T) {
	started, asked := make(chan string, 1), make(chan string, 1)
	r := newTestRuntime(t, nil, testAgent("a", askAfterInterrupt{started: started, asked: asked}))
	task := send(t, r, "a", "hi")
	cancelOnCleanup(t, r, task.ID)
	<-started
	if _, err := r.Cancel(ctxT(t), task.ID); err != nil {
		t.Fatal(err)
	}
	<-asked
	checkNeverParked(t, r, task.ID)
}

// Under the interrupt policy, a newer message that lands before the engine
// asks the user supersedes the run: it ends canceled, not input-required.
func TestInterruptBeforeAskUserCancels(t *testing.T) {
	started, asked := make(chan string, 2), make(chan string, 2)
	ag := testAgent("i", askAfterInterrupt{started: started, asked: asked})
	ag.Multitask = MultitaskInterrupt
	r := newTestRuntime(t, nil, ag)
	first := send(t, r, "i", "one")
	<-started
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "i", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
	if err != nil {
		t.Fatal(err)
	}
	cancelOnCleanup(t, r, sub.Task.ID)
	if id := <-asked; id != first.ID {
		t.Fatalf("%s asked, want the interrupted %s", id, first.ID)
	}
	checkNeverParked(t, r, first.ID)
	<-started // the newer task runs; stop it too
	if _, err := r.Cancel(ctxT(t), sub.Task.ID); err != nil {
		t.Fatal(err)
	}
	<-asked
	checkNeverParked(t, r, sub.Task.ID)
}

// Every exit path ends the attempt with run.end, last and once, carrying
// the terminal state: an engine error, an exceeded budget, a cancel of a
// running and of a queued task.
func TestRunEndLastOnErrorPaths(t *testing.T) { logModes(t, testRunEndLastOnErrorPaths) }

func testRunEndLastOnErrorPaths(t *testing.T) {
	t.Run("engine error", func(t *testing.T) {
		eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
			_ = h.Publish(ctx, engine.Token{Actor: "e", Text: "partial "})
			return b, errdefs.Internalf("the model fell over")
		})
		r := newTestRuntime(t, nil, testAgent("e", eng))
		got := wait(t, r, send(t, r, "e", "x").ID)
		if got.State != run.StateFailed {
			t.Fatalf("state %s, want failed", got.State)
		}
		checkFailedEnd(t, r, got.ID)
	})
	t.Run("cancel of a running task", func(t *testing.T) {
		started := make(chan string, 1)
		r := newTestRuntime(t, nil, testAgent("b", blocker(false, started)))
		task := send(t, r, "b", "x")
		cancelOnCleanup(t, r, task.ID)
		<-started
		if _, err := r.Cancel(ctxT(t), task.ID); err != nil {
			t.Fatal(err)
		}
		if got := wait(t, r, task.ID); got.State != run.StateCanceled {
			t.Fatalf("state %s, want canceled", got.State)
		}
		evs := storedEvents(t, r.st, task.ID)
		if ends := checkAttemptsFramed(t, evs, run.StateCanceled); len(ends) != 1 {
			t.Fatalf("%d attempts, want 1: %v", len(ends), types(evs))
		}
	})
	t.Run("cancel of a queued task", func(t *testing.T) {
		r, running, queued, _ := queueBehind(t, nil)
		if ct, err := r.Cancel(ctxT(t), queued.ID); err != nil || ct.State != run.StateCanceled {
			t.Fatalf("cancel of the queued task: %s %v, want canceled", ct.State, err)
		}
		evs := storedEvents(t, r.st, queued.ID)
		if ends := checkAttemptsFramed(t, evs, run.StateCanceled); len(ends) != 1 {
			t.Fatalf("%d attempts, want 1: %v", len(ends), types(evs))
		}
		if _, err := r.Cancel(ctxT(t), running.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, r, running.ID)
	})
}

// checkFailedEnd asserts a failed run's single attempt ends with run.end
// last, carrying the failure and its error.
func checkFailedEnd(t *testing.T, r *Runtime, runID string) {
	t.Helper()
	evs := storedEvents(t, r.st, runID)
	ends := checkAttemptsFramed(t, evs, run.StateFailed)
	if len(ends) != 1 || evFrameOf(t, ends[0]).Error == nil {
		t.Fatalf("run.end %v in %v, want one, with the error", types(ends), types(evs))
	}
}
