package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// hooked wraps a store with one-shot hooks.
type hooked struct {
	store.Store
	mu      sync.Mutex
	acquire func() error      // AcquireLease: called before the real call
	release func()            // ReleaseLease (before the real call), or after an Apply that releases a lease
	list    func() error      // ListMessages
	read    func(after int64) // ReadEvents: called after the real call
}

func (h *hooked) take(p any) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch p := p.(type) {
	case *func() error:
		f := *p
		*p = nil
		return f
	case *func():
		f := *p
		*p = nil
		return f
	}
	return nil
}

func (h *hooked) set(f func()) { h.mu.Lock(); f(); h.mu.Unlock() }

// cancelResult is what a Cancel answered.
type cancelResult struct {
	t   run.Task
	err error
}

// cancelHeld starts a Cancel of taskID that h holds at its lease
// acquisition (in cancelIdle, holding the task's canceling mark), and
// returns once it is held: release lets it go on, and its answer arrives
// on the channel.
func cancelHeld(t *testing.T, r *Runtime, h *hooked, taskID string) (release func(), answer <-chan cancelResult) {
	t.Helper()
	entered, proceed := make(chan struct{}), make(chan struct{})
	h.set(func() { h.acquire = func() error { close(entered); <-proceed; return nil } })
	done := make(chan cancelResult, 1)
	go func() {
		ct, err := r.Cancel(ctxT(t), taskID)
		done <- cancelResult{ct, err}
	}()
	select {
	case <-entered:
	case <-ctxT(t).Done():
		t.Fatal("the cancel never took the lease")
	}
	return func() { close(proceed) }, done
}

func (h *hooked) AcquireLease(ctx context.Context, runID, owner string, ttl time.Duration) (store.Lease, error) {
	if f, _ := h.take(&h.acquire).(func() error); f != nil {
		if err := f(); err != nil {
			return store.Lease{}, err
		}
	}
	return h.Store.AcquireLease(ctx, runID, owner, ttl)
}

func (h *hooked) ReleaseLease(ctx context.Context, l store.Lease) error {
	if f, _ := h.take(&h.release).(func()); f != nil {
		f()
	}
	return h.Store.ReleaseLease(ctx, l)
}

// Apply gives a change that releases its lease (a run's final commit) to
// the release hook once it is applied: the window between the commit and
// the run leaving the runtime.
func (h *hooked) Apply(ctx context.Context, c store.Change) error {
	err := h.Store.Apply(ctx, c)
	if c.Release != nil {
		if f, _ := h.take(&h.release).(func()); f != nil {
			f()
		}
	}
	return err
}

func (h *hooked) ListMessages(ctx context.Context, q run.MessageQuery) (run.MessagePage, error) {
	if f, _ := h.take(&h.list).(func() error); f != nil {
		if err := f(); err != nil {
			return run.MessagePage{}, err
		}
	}
	return h.Store.ListMessages(ctx, q)
}

func (h *hooked) ReadEvents(ctx context.Context, runID string, after int64, limit int) (run.EventPage, error) {
	p, err := h.Store.ReadEvents(ctx, runID, after, limit)
	h.mu.Lock()
	f := h.read
	if f != nil && after == 1<<62 {
		h.read = nil
	} else {
		f = nil
	}
	h.mu.Unlock()
	if f != nil {
		f(after)
	}
	return p, err
}

// storedEvents reads a run's whole log from the store.
func storedEvents(t *testing.T, st store.Store, runID string) []run.Event {
	t.Helper()
	p, err := st.ReadEvents(ctxT(t), runID, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return p.Events
}

// framed checks run.start/run.end alternate and the log ends with run.end.
func framed(evs []run.Event) bool {
	open := false
	for _, ev := range evs {
		switch ev.Type {
		case EventRunStart:
			if open {
				return false
			}
			open = true
		case EventRunEnd:
			if !open {
				return false
			}
			open = false
		default:
			if !open {
				return false
			}
		}
	}
	return !open
}

func until(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// parkThenBlock asks on the first attempt; a resumed attempt consumes the
// reply and then works until interrupted.
type parkThenBlock struct {
	resumed chan struct{}
	exited  chan struct{}
}

func (parkThenBlock) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true, EmitsUserPrompt: true}
}

func (p parkThenBlock) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	if run.ResumeFrom == nil {
		if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: "ask", Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
			return b, err
		}
	} else {
		b = engine.RestoreBoard(run.ResumeFrom.Board)
	}
	if _, err := h.AskUser(ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("name?")}}); err != nil {
		return b, err
	}
	defer close(p.exited)
	close(p.resumed)
	_ = h.Publish(ctx, engine.Token{Actor: "x", Text: "working "})
	select {
	case intr := <-h.Interrupts():
		return b, engine.Interrupted(intr)
	case <-ctx.Done():
		return b, ctx.Err()
	}
}

// Regression (review finding F1): a cancel of an input-required task that races a resume overwrites the
// running attempt's state and releases its lease: the attempt is abandoned
// with no run.end, and the task reads canceled while its engine still runs.
func TestCancelRacesResume(t *testing.T) {
	h := &hooked{Store: memstore.New()}
	eng := parkThenBlock{resumed: make(chan struct{}), exited: make(chan struct{})}
	r, err := New(Options{Store: h, Agents: []*Agent{testAgent("a", eng)}, CancelGrace: 300 * time.Millisecond, LeaseTTL: 300 * time.Millisecond, SweepEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Shutdown(ctxT(t)) }()
	task := send(t, r, "a", "hi")
	if got := wait(t, r, task.ID); got.State != run.StateInputRequired {
		t.Fatalf("state %s", got.State)
	}
	release, cancelDone := cancelHeld(t, r, h, task.ID) // in cancelIdle, the task idle
	_, err = r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: model.NewText(model.RoleUser, "Ada")})
	if !errdefs.IsConflict(err) {
		t.Errorf("a resume while a cancel is in progress: %v, want Conflict", err)
	}
	release()
	cr := <-cancelDone
	if cr.err != nil || cr.t.State != run.StateCanceled {
		t.Fatalf("cancel answered %s %v, want canceled", cr.t.State, cr.err)
	}
	got, _ := h.GetTask(ctxT(t), task.ID)
	evs := storedEvents(t, h, task.ID)
	// The parked attempt ended with its run.end; the cancel of the idle
	// task is an attempt of its own: run.start, the canceled status,
	// run.end.
	n := len(evs)
	if got.State != run.StateCanceled || got.Attempt != 2 || n < 3 || !framed(evs) ||
		evs[n-3].Type != EventRunStart || evs[n-2].Type != EventStatus || evs[n-1].Type != EventRunEnd {
		t.Errorf("final state %s attempt %d, events %v: want canceled in attempt 2, every attempt framed, the last one run.start, status, run.end", got.State, got.Attempt, types(evs))
	}
}

// Regression (review finding F2): a reader on a replica that does not execute the run opens its stream
// while the run finishes elsewhere; acquireLog reads LastSeq before the
// task, records a stale terminal seq, and the stream ends before run.end.
func TestStaleTerminalOnOpen(t *testing.T) {
	shared := shared{memstore.New()}
	gate := make(chan struct{})
	a := replica(t, shared, "A", streamer(3, gate))
	hb := &hooked{Store: shared}
	b := replica(t, hb, "B", streamer(3, nil))
	task := send(t, a, "c", "x")
	gate <- struct{}{}
	entered, proceed := make(chan struct{}), make(chan struct{})
	hb.set(func() { hb.read = func(int64) { close(entered); <-proceed } })
	type out struct {
		evs []run.Event
	}
	got := make(chan out, 1)
	go func() { got <- out{readAll(t, b, task.ID, 0, false)} }()
	<-entered // B read LastSeq; the run is not finished yet
	gate <- struct{}{}
	gate <- struct{}{}
	if done := wait(t, a, task.ID); done.State != run.StateCompleted {
		t.Fatalf("state %s", done.State)
	}
	close(proceed)
	evs := (<-got).evs
	all := storedEvents(t, shared, task.ID)
	if len(evs) != len(all) || evs[len(evs)-1].Type != EventRunEnd {
		t.Errorf("reader on B got %v; the log holds %v", types(evs), types(all))
	}
}

// Regression (review finding F3): a drain launches a queued task after interrupting the running one,
// and then hard-cancels it: the queued task ends canceled (terminal) instead
// of staying resumable.
func TestDrainCancelsQueuedTask(t *testing.T) {
	started := make(chan string, 4)
	ag := testAgent("q", blocker(false, started))
	ag.Multitask = MultitaskEnqueue
	r, err := New(Options{Store: memstore.New(), Agents: []*Agent{ag}, CancelGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first := send(t, r, "q", "one")
	<-started
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "q", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = r.Shutdown(ctx)
	f, _ := r.GetTask(ctxT(t), first.ID)
	q, _ := r.GetTask(ctxT(t), sub.Task.ID)
	t.Logf("first %s, queued %s", f.State, q.State)
	if q.State.Terminal() {
		t.Errorf("queued task ended %s because of a drain", q.State)
	}
}

// Regression (review finding F4): a transient store error while taking the lease at start strands the
// task in submitted: run.start without run.end, no lease, nobody resumes it.
func TestTransientLeaseErrorStrandsTask(t *testing.T) {
	h := &hooked{Store: memstore.New()}
	h.acquire = func() error { return errdefs.NotAvailablef("db blip") }
	r := newTestRuntime(t, h, testAgent("s", streamer(1, nil)))
	task := send(t, r, "s", "x")
	until(t, func() bool { return r.launched() == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	got, err := r.Wait(ctx, task.ID)
	evs := storedEvents(t, h, task.ID)
	t.Logf("wait: %s %v; events %v", got.State, err, types(evs))
	if !got.State.Terminal() {
		t.Errorf("task stranded in %s", got.State)
	}
}

// Regression (review finding F5): a transient store error while finishing (listing the transcript)
// leaves the task working with its lease released: never finished, never
// recovered.
func TestTransientErrorInFinishStrandsTask(t *testing.T) {
	h := &hooked{Store: memstore.New()}
	gate := make(chan struct{})
	r := newTestRuntime(t, h, testAgent("s", streamer(1, gate)))
	task := send(t, r, "s", "x")
	until(t, func() bool { t2, _ := h.GetTask(ctxT(t), task.ID); return t2.State == run.StateWorking })
	time.Sleep(50 * time.Millisecond) // let history() read the transcript first
	h.set(func() { h.list = func() error { return errdefs.NotAvailablef("db blip") } })
	close(gate)
	until(t, func() bool { return r.launched() == 0 })
	got, _ := h.GetTask(ctxT(t), task.ID)
	exp, _ := h.ExpiredLeases(ctxT(t), time.Now().Add(time.Hour), 10)
	evs := storedEvents(t, h, task.ID)
	t.Logf("state %s, expired leases %d, events %v", got.State, len(exp), types(evs))
	if !got.State.Terminal() && len(exp) == 0 {
		t.Errorf("task stuck %s with no lease: nobody will finish it", got.State)
	}
}

// Regression (review finding F6): a cancel that arrives while a parking run has committed
// input-required but not yet left r.runs is swallowed.
func TestCancelLostWhileParking(t *testing.T) {
	h := &hooked{Store: memstore.New()}
	entered, proceed := make(chan struct{}), make(chan struct{})
	h.release = func() { close(entered); <-proceed }
	r := newTestRuntime(t, h, testAgent("a", asker{}))
	task := send(t, r, "a", "hi")
	<-entered // finish committed input-required; release() is in progress
	ct, err := r.Cancel(ctxT(t), task.ID)
	t.Logf("cancel answered %s %v", ct.State, err)
	close(proceed)
	until(t, func() bool { return r.launched() == 0 })
	got, _ := h.GetTask(ctxT(t), task.ID)
	if got.State != run.StateCanceled {
		t.Errorf("after an accepted cancel the task is %s", got.State)
	}
}

// Regression (review finding F7): resending the same reply (same message id) to a resumed task answers
// 409 instead of the run it started.
func TestDuplicateReplyConflicts(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("a", asker{}))
	task := send(t, r, "a", "hi")
	wait(t, r, task.ID)
	reply := model.NewText(model.RoleUser, "Ada")
	reply.ID = "reply-1"
	if _, err := r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: reply}); err != nil {
		t.Fatal(err)
	}
	wait(t, r, task.ID)
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: reply})
	if err != nil {
		t.Errorf("retried reply: %v (want the same run answered, Duplicate)", err)
	} else if !sub.Duplicate {
		t.Errorf("retried reply not marked duplicate")
	}
}

var _ = errors.Is
var _ atomic.Bool

// gatedAsker waits for gate, then asks; a resumed attempt works until
// interrupted.
type gatedAsker struct {
	started, resumed chan struct{}
	gate             chan struct{}
}

func (gatedAsker) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true, EmitsUserPrompt: true}
}

func (g gatedAsker) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	if run.ResumeFrom == nil {
		if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: "ask", Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
			return b, err
		}
		close(g.started)
		<-g.gate
	} else {
		b = engine.RestoreBoard(run.ResumeFrom.Board)
	}
	if _, err := h.AskUser(ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("name?")}}); err != nil {
		return b, err
	}
	close(g.resumed)
	select {
	case intr := <-h.Interrupts():
		return b, engine.Interrupted(intr)
	case <-ctx.Done():
		return b, ctx.Err()
	}
}

// Regression (review finding F8): a cancel recorded for a remote owner (CancelRequested) is dropped
// when the run parks before the owner sees it, and resurfaces to kill the
// next resume.
func TestRemoteCancelStickyAcrossPark(t *testing.T) {
	shared := shared{memstore.New()}
	eng := gatedAsker{started: make(chan struct{}), resumed: make(chan struct{}), gate: make(chan struct{})}
	mk := func(name string) *Runtime {
		r, err := New(Options{Store: shared, Agents: []*Agent{testAgent("c", eng)}, ReplicaID: name, CancelGrace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Shutdown(ctxT(t)) })
		return r
	}
	a, b := mk("A"), mk("B")
	task := send(t, a, "c", "hi")
	<-eng.started
	ct, err := b.Cancel(ctxT(t), task.ID)
	t.Logf("cancel from B: %s requested=%v %v", ct.State, ct.CancelRequested, err)
	close(eng.gate)
	parked := wait(t, a, task.ID)
	t.Logf("after the cancel request the task is %s (cancel_requested=%v)", parked.State, parked.CancelRequested)
	if parked.State != run.StateCanceled {
		t.Errorf("accepted cancel dropped: task %s", parked.State)
	}
	if parked.State != run.StateInputRequired {
		return
	}
	if _, err := a.Send(ctxT(t), SendRequest{AgentID: "c", TaskID: task.ID, Message: model.NewText(model.RoleUser, "Ada")}); err != nil {
		t.Fatal(err)
	}
	<-eng.resumed
	done := wait(t, a, task.ID)
	t.Logf("resumed attempt ended %s", done.State)
	if done.State == run.StateCanceled {
		t.Errorf("the old cancel request killed the resumed attempt")
	}
}

// Regression (review finding F9): a raw payload with leading whitespace is accepted by Publish,
// spliced into invalid event JSON, and poisons the flusher and the finish.
func TestRawPayloadNotNormalised(t *testing.T) {
	eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		for _, ev := range []engine.Event{
			engine.Plan{Actor: "a", Plan: []byte(` {"steps":[]}`)},
			engine.Verdict{Actor: "a", Payload: []byte(` {"call_id":"c1","verdict":"allow"}`)},
			engine.Compaction{Actor: "a", Payload: []byte(` {"tokens_before":9,"tokens_after":3}`)},
		} {
			if err := h.Publish(ctx, ev); err != nil {
				return b, err
			}
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "ok"))
		return b, nil
	})
	r := newTestRuntime(t, nil, testAgent("a", eng))
	task := send(t, r, "a", "x")
	until(t, func() bool { return r.launched() == 0 })
	got, _ := r.GetTask(ctxT(t), task.ID)
	evs := storedEvents(t, r.st, task.ID)
	t.Logf("state %s events %v", got.State, types(evs))
	if seq := strings.Join(types(evs), " "); !strings.Contains(seq, "plan governance context.compaction") {
		t.Errorf("events %s, want the plan, the verdict and the compaction logged", seq)
	}
	if !got.State.Terminal() {
		t.Errorf("run stuck in %s after a publish the host accepted", got.State)
	}
}

type applyHook struct {
	store.Store
	mu   sync.Mutex
	hook func()
}

func (a *applyHook) Apply(ctx context.Context, c store.Change) error {
	a.mu.Lock()
	f := a.hook
	if c.CreateTask != nil {
		a.hook = nil
	} else {
		f = nil
	}
	a.mu.Unlock()
	if f != nil {
		f()
	}
	return a.Store.Apply(ctx, c)
}

// Regression (review finding F10): a Send that passed the draining check commits after Shutdown
// returned: the client is told the run was accepted, and it never runs.
func TestSendRacingShutdown(t *testing.T) {
	entered, proceed := make(chan struct{}), make(chan struct{})
	st := &applyHook{Store: memstore.New(), hook: func() { close(entered); <-proceed }}
	r, err := New(Options{Store: st, Agents: []*Agent{testAgent("s", streamer(1, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		sub Submission
		err error
	}
	out := make(chan res, 1)
	go func() {
		sub, err := r.Send(ctxT(t), SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, "x")})
		out <- res{sub, err}
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- r.Shutdown(ctxT(t)) }()
	close(proceed) // the submission lands while Shutdown waits for it
	got := <-out
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if got.err == nil {
		task, _ := st.GetTask(ctxT(t), got.sub.Task.ID)
		if !task.State.Terminal() {
			t.Errorf("a send accepted during shutdown left its task %s", task.State)
		}
	} else if !errors.Is(got.err, ErrDraining) {
		t.Errorf("send during shutdown: %v, want success or ErrDraining", got.err)
	}
}

// Regression (review finding F11): a queued task's board lacks the answer of the task it queued behind:
// that answer is stored after the queued user message and history() drops
// it as "a later task's message".
func TestQueuedTaskSeesPreviousAnswer(t *testing.T) {
	gate := make(chan struct{})
	boards := make(chan []string, 4)
	eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		var texts []string
		for _, m := range b.Channel(engine.MainChannel) {
			texts = append(texts, string(m.Role)+":"+m.Text())
		}
		boards <- texts
		select {
		case <-gate:
		case <-ctx.Done():
			return b, ctx.Err()
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "answer to "+texts[len(texts)-1]))
		return b, nil
	})
	ag := testAgent("q", eng)
	ag.Multitask = MultitaskEnqueue
	r := newTestRuntime(t, nil, ag)
	first := send(t, r, "q", "one")
	<-boards
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "q", ContextID: first.ContextID, Message: model.NewText(model.RoleUser, "two")})
	if err != nil {
		t.Fatal(err)
	}
	gate <- struct{}{}
	second := <-boards
	gate <- struct{}{}
	wait(t, r, sub.Task.ID)
	t.Logf("second task's board: %v", second)
	found := false
	for _, s := range second {
		if s == "assistant:answer to user:one" {
			found = true
		}
	}
	if !found {
		t.Errorf("queued task does not see the answer of the task before it: %v", second)
	}
}

// An answer sent as soon as the task reads input-required — while the
// attempt that parked it has stored its outcome but not yet left the
// runtime (an A2A stream ends on that update) — resumes the task; it was
// refused as "being resumed or canceled already".
func TestAnswerWhileTheParkingAttemptLeaves(t *testing.T) {
	h := &hooked{Store: memstore.New()}
	entered, proceed := make(chan struct{}), make(chan struct{})
	h.release = func() { close(entered); <-proceed }
	r := newTestRuntime(t, h, testAgent("a", asker{}))
	task := send(t, r, "a", "hi")
	<-entered // finish committed input-required; the attempt has not left
	got, err := h.GetTask(ctxT(t), task.ID)
	if err != nil || got.State != run.StateInputRequired {
		t.Fatalf("task %s %v, want input-required stored", got.State, err)
	}
	answered := make(chan error, 1)
	go func() {
		_, err := r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: model.NewText(model.RoleUser, "Ada")})
		answered <- err
	}()
	time.Sleep(50 * time.Millisecond) // the answer meets the leaving attempt
	close(proceed)
	if err := <-answered; err != nil {
		t.Fatalf("answer while the parking attempt leaves: %v", err)
	}
	if done := wait(t, r, task.ID); done.State != run.StateCompleted {
		t.Fatalf("task %s after the answer, want completed", done.State)
	}
}
