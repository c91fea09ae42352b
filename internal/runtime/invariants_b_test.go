package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// Invariant 4: a subscriber that falls behind the memory log of a run that
// is still executing catches up from the store; it is never skipped ahead.
func TestStalledSubscriberCatchesUpWhileRunIsLive(t *testing.T) {
	logModes(t, testStalledSubscriberCatchesUpWhileRunIsLive)
}

func testStalledSubscriberCatchesUpWhileRunIsLive(t *testing.T) {
	const before, total = 3 * runlog.MemoryTail, 3*runlog.MemoryTail + 10
	gate := make(chan struct{}, total)
	for range before {
		gate <- struct{}{}
	}
	r := newTestRuntime(t, nil, testAgent("s", streamer(total, gate)))
	task := send(t, r, "s", "go")
	ctx := ctxT(t)
	st, err := r.OpenStream(ctx, task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Next(ctx, 1, time.Second) // read one event, then stall
	if err != nil || len(got) != 1 {
		t.Fatalf("first read: %v %v", types(got), err)
	}
	// The engine waits on the gate after `before` tokens: the run stays
	// active while memory moves past the stalled cursor.
	until(t, func() bool {
		base, _ := st.Memory()
		return base > 1
	})
	lastBefore := fmt.Sprintf("tok%d ", before)
	for len(got) == 0 || deltaText(t, got[len(got)-1]) != lastBefore {
		evs, err := st.Next(ctx, 100, time.Second)
		if err != nil {
			t.Fatalf("reading behind a live run: %v after %v", err, types(got[max(0, len(got)-3):]))
		}
		got = append(got, evs...)
	}
	_, active := st.Memory()
	if !active {
		t.Fatal("the run is no longer active: the test needs the reader to catch up during the run")
	}
	for range total - before {
		gate <- struct{}{}
	}
	for got[len(got)-1].Type != EventRunEnd {
		evs, err := st.Next(ctx, 100, time.Second)
		if err != nil {
			t.Fatalf("reading to run.end: %v", err)
		}
		got = append(got, evs...)
	}
	checkDense(t, got, 0)
	checkTokensOnce(t, got, total)
}

// deltaText is the text of a delta event ("" for other events).
func deltaText(t *testing.T, ev run.Event) string {
	t.Helper()
	if ev.Type != EventDelta {
		return ""
	}
	var d DeltaData
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatalf("delta %d: %v", ev.Seq, err)
	}
	return d.Text
}

// checkTokensOnce asserts that evs hold streamer's tokens 1..n, each exactly
// once, in order.
func checkTokensOnce(t *testing.T, evs []run.Event, n int) {
	t.Helper()
	next := 1
	for _, ev := range evs {
		text := deltaText(t, ev)
		if text == "" {
			continue
		}
		if want := fmt.Sprintf("tok%d ", next); text != want {
			t.Fatalf("event %d carries %q, want %q", ev.Seq, text, want)
		}
		next++
	}
	if next != n+1 {
		t.Fatalf("read %d tokens, want %d", next-1, n)
	}
}

// terminalGate holds the Apply that carries a task's terminal state until
// release is closed, and then fails it with fail when set. Once a terminal
// state is stored, later writes wait for later, so that nothing written
// after the terminal commit can reach a reader's checks.
type terminalGate struct {
	store.Store
	fail    error
	blocked chan struct{} // closed when the first terminal Apply is held
	release chan struct{}
	later   chan struct{}

	releaseOnce, laterOnce sync.Once

	mu       sync.Mutex
	held     bool
	terminal bool // a terminal state is stored
}

// letGo releases the held terminal Apply.
func (g *terminalGate) letGo() { g.releaseOnce.Do(func() { close(g.release) }) }

// open lets every write through, so that a test that stops early does not
// leave its run waiting on the gate.
func (g *terminalGate) open() {
	g.letGo()
	g.laterOnce.Do(func() { close(g.later) })
}

func newTerminalGate(fail error) *terminalGate {
	return &terminalGate{Store: memstore.New(), fail: fail, blocked: make(chan struct{}), release: make(chan struct{}), later: make(chan struct{})}
}

func (g *terminalGate) Apply(ctx context.Context, c store.Change) error {
	terminal := c.UpdateTask != nil && c.UpdateTask.State.Terminal()
	g.mu.Lock()
	first := terminal && !g.held
	g.held = g.held || terminal
	after := g.terminal
	g.mu.Unlock()
	wait := func(ch chan struct{}) error {
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if after {
		if err := wait(g.later); err != nil {
			return err
		}
	}
	if first {
		close(g.blocked)
		if err := wait(g.release); err != nil {
			return err
		}
	}
	if terminal && g.fail != nil {
		return g.fail
	}
	err := g.Store.Apply(ctx, c)
	if terminal && err == nil {
		g.mu.Lock()
		g.terminal = true
		g.mu.Unlock()
	}
	return err
}

// gatedRuntime is newTestRuntime on st, with a volatile or durable log as
// logModes says, and no recovery sweep within a test's time.
func gatedRuntime(t *testing.T, st store.Store, agents ...*Agent) *Runtime {
	t.Helper()
	return startRuntime(t, Options{Store: inLogMode(st), Agents: agents, SweepEvery: time.Hour})
}

// readVisible reads every event visible to st now, without waiting.
func readVisible(t *testing.T, st *Stream) []run.Event {
	t.Helper()
	var out []run.Event
	for {
		evs, _, err := st.Read(ctxT(t), 64)
		if err != nil && !errors.Is(err, runlog.ErrPoll) {
			t.Fatalf("read: %v", err)
		}
		if len(evs) == 0 {
			return out
		}
		out = append(out, evs...)
	}
}

// terminalSeen names the first run.end or terminal status in evs ("" if
// none).
func terminalSeen(t *testing.T, evs []run.Event) string {
	t.Helper()
	for _, ev := range evs {
		switch ev.Type {
		case EventRunEnd:
			return fmt.Sprintf("run.end (seq %d)", ev.Seq)
		case EventStatus:
			var d StatusData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatalf("status %d: %v", ev.Seq, err)
			}
			if d.State.Terminal() {
				return fmt.Sprintf("status %s (seq %d)", d.State, ev.Seq)
			}
		}
	}
	return ""
}

// heldTerminal is a two-token run whose terminal commit a terminalGate
// holds, and a reader of its events.
type heldTerminal struct {
	r    *Runtime
	g    *terminalGate
	st   *Stream
	task run.Task
	got  []run.Event // what the reader got while the commit was held
}

// holdTerminal starts a heldTerminal run (the gate failing its terminal
// writes with fail when set) and checks that while its terminal commit is
// held the reader gets nothing terminal.
func holdTerminal(t *testing.T, ctx context.Context, fail error) *heldTerminal {
	t.Helper()
	h := &heldTerminal{g: newTerminalGate(fail)}
	h.r = gatedRuntime(t, h.g, testAgent("s", streamer(2, nil)))
	t.Cleanup(h.g.open) // before the runtime's Shutdown: cleanups run last first
	h.task = send(t, h.r, "s", "go")
	var err error
	if h.st, err = h.r.OpenStream(ctx, h.task.ID, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.st.Close)
	select {
	case <-h.g.blocked:
	case <-ctx.Done():
		t.Fatal("the terminal commit never reached the store")
	}
	h.got = readVisible(t, h.st)
	if what := terminalSeen(t, h.got); what != "" {
		t.Fatalf("the reader got %s while the store had not stored it (events %v)", what, types(h.got))
	}
	return h
}

// Invariant 6: the terminal state, the final transcript messages and
// run.end are durable before a stream delivers run.end.
func TestRunEndVisibleOnlyOnceDurable(t *testing.T) {
	logModes(t, testRunEndVisibleOnlyOnceDurable)
}

func testRunEndVisibleOnlyOnceDurable(t *testing.T) {
	ctx := ctxT(t)
	h := holdTerminal(t, ctx, nil)
	h.g.letGo()
	got := h.got
	for len(got) == 0 || got[len(got)-1].Type != EventRunEnd {
		evs, err := h.st.Next(ctx, 64, time.Second)
		if err != nil {
			t.Fatalf("reading to run.end: %v (read %v)", err, types(got))
		}
		got = append(got, evs...)
	}
	end := got[len(got)-1]
	stored, err := h.g.GetTask(ctx, h.task.ID)
	if err != nil || stored.State != run.StateCompleted {
		t.Errorf("when the reader got run.end the stored task was %s (%v), want completed", stored.State, err)
	}
	if evs := storedEvents(t, h.g, h.task.ID); len(evs) == 0 || evs[len(evs)-1].Seq != end.Seq || evs[len(evs)-1].Type != EventRunEnd {
		t.Errorf("when the reader got run.end (seq %d) the stored log was %v", end.Seq, types(evs))
	}
	page, err := h.g.ListMessages(ctx, run.MessageQuery{ContextID: h.task.ContextID, TaskID: h.task.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range page.Messages {
		found = found || (m.Message.Role == model.RoleAssistant && m.Message.Text() == "tok1 tok2 ")
	}
	if !found {
		t.Errorf("when the reader got run.end the transcript lacked the final answer: %d messages", len(page.Messages))
	}
	checkDense(t, got, 0)
}

// Invariant 6: run.end of a terminal commit the store refused is never
// shown.
func TestRunEndOfFailedCommitNeverVisible(t *testing.T) {
	logModes(t, testRunEndOfFailedCommitNeverVisible)
}

func testRunEndOfFailedCommitNeverVisible(t *testing.T) {
	h := holdTerminal(t, ctxT(t), errdefs.Conflictf("task changed meanwhile"))
	h.g.letGo()
	until(t, func() bool { return h.r.launched() == 0 }) // finish gave up
	got := append(h.got, readVisible(t, h.st)...)
	if what := terminalSeen(t, got); what != "" {
		t.Errorf("the reader got %s of a commit the store refused (events %v)", what, types(got))
	}
	if evs := storedEvents(t, h.g, h.task.ID); terminalSeen(t, evs) != "" {
		t.Errorf("the store holds the refused commit's events: %v", types(evs))
	}
	checkDense(t, got, 0)
}

// deltaApplies wraps a store and counts the writes that carry deltas.
type deltaApplies struct {
	store.Store
	mu     sync.Mutex
	writes int
}

func (d *deltaApplies) Apply(ctx context.Context, c store.Change) error {
	for _, ev := range c.Events {
		if ev.Type == EventDelta {
			d.mu.Lock()
			d.writes++
			d.mu.Unlock()
			break
		}
	}
	return d.Store.Apply(ctx, c)
}

// Invariant 7: token deltas are coalesced before they are persisted, and a
// live subscriber still sees the first token at once.
func TestDeltasCoalescedFirstShownAtOnce(t *testing.T) {
	const tokens = 500
	hold := make(chan struct{})
	eng := engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
		text := ""
		for i := 1; i <= tokens; i++ {
			tok := fmt.Sprintf("tok%d ", i)
			text += tok
			if err := h.Publish(ctx, engine.Token{Actor: "streamer", Text: tok}); err != nil {
				return b, err
			}
			if i == 1 {
				select {
				case <-hold:
				case <-ctx.Done():
					return b, ctx.Err()
				}
				continue
			}
			// A token's pace, as from a model: far longer than a memstore
			// write, far shorter than the flush window.
			time.Sleep(time.Millisecond)
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, text))
		return b, nil
	})
	st := &deltaApplies{Store: memstore.New()}
	r, err := New(Options{Store: st, Agents: []*Agent{testAgent("s", eng)}, FlushWindow: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Shutdown(ctxT(t)) }()
	letGo := sync.OnceFunc(func() { close(hold) })
	defer letGo()
	task := send(t, r, "s", "go")
	ctx := ctxT(t)
	s, err := r.OpenStream(ctx, task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []run.Event
	for deltaText(t, lastOf(got)) == "" {
		evs, err := s.Next(ctx, 64, time.Second)
		if err != nil {
			t.Fatalf("the first token did not reach a live reader while the engine waited after it: %v (read %v)", err, types(got))
		}
		got = append(got, evs...)
	}
	letGo()
	for {
		evs, err := s.Next(ctx, 256, time.Second)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs...)
	}
	checkDense(t, got, 0)
	checkTokensOnce(t, got, tokens)
	checkTokensOnce(t, storedEvents(t, st, task.ID), tokens)
	st.mu.Lock()
	writes := st.writes
	st.mu.Unlock()
	t.Logf("%d tokens in %d writes", tokens, writes)
	if writes > tokens/10 {
		t.Errorf("%d tokens took %d store writes, want at most %d", tokens, writes, tokens/10)
	}
}

func lastOf(evs []run.Event) run.Event {
	if len(evs) == 0 {
		return run.Event{}
	}
	return evs[len(evs)-1]
}
