package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgMain{m}) }

// pgMain runs the tests under pgtest, which provides the PostgreSQL
// databases of the multi-replica tests and stops a throwaway cluster.
type pgMain struct{ m *testing.M }

func (p pgMain) Run() int { return pgtest.Run(p.m) }

// testTimeout bounds every wait in these tests.
const testTimeout = 20 * time.Second

// durableLogs makes newTestRuntime's own memstore runtimes show events only
// once durable, as with a shared store; by default they run as
// cmd/server runs memstore (store.Volatile). logModes runs a test
// both ways.
var durableLogs bool

// logModes runs test with volatile and with durable run logs.
func logModes(t *testing.T, test func(*testing.T)) {
	t.Run("volatile", test)
	t.Run("durable", func(t *testing.T) {
		durableLogs = true
		defer func() { durableLogs = false }()
		test(t)
	})
}

// newTestRuntime is a runtime on st, or on a memstore of its own when st is
// nil.
func newTestRuntime(t *testing.T, st store.Store, agents ...*Agent) *Runtime {
	t.Helper()
	if st == nil {
		st = inLogMode(memstore.New())
	}
	return startRuntime(t, Options{Store: st, Agents: agents})
}

// inLogMode is st (a memstore, or a test's wrapper of one) as logModes
// asks: declaring itself volatile, as memstore does (a wrapper hides it),
// or, with durableLogs, a store that declares nothing, as one replicas
// share.
func inLogMode(st store.Store) store.Store {
	if durableLogs {
		return shared{st}
	}
	return volatileStore{st}
}

// shared is a store that does not declare itself volatile, whatever it
// wraps: one that replicas share.
type shared struct{ store.Store }

// volatileStore declares st volatile (store.Volatile), whatever it wraps.
type volatileStore struct{ store.Store }

func (volatileStore) Volatile() bool { return true }

// DeleteRun passes the optional store.RunDeleter through both wrappers
// (memstore and pgstore have it), which embedding the interface hides.
func (s volatileStore) DeleteRun(ctx context.Context, id string) error {
	return s.Store.(store.RunDeleter).DeleteRun(ctx, id)
}

func (s shared) DeleteRun(ctx context.Context, id string) error {
	return s.Store.(store.RunDeleter).DeleteRun(ctx, id)
}

// startRuntime starts a runtime with the tests' short cancel grace and
// flush window (unless opts sets them), shut down at cleanup.
func startRuntime(t *testing.T, opts Options) *Runtime {
	t.Helper()
	if opts.CancelGrace == 0 {
		opts.CancelGrace = 300 * time.Millisecond
	}
	if opts.FlushWindow == 0 {
		opts.FlushWindow = 5 * time.Millisecond
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = r.Shutdown(ctx)
	})
	return r
}

func testAgent(id string, eng engine.Engine) *Agent {
	return &Agent{Agent: agent.Agent{ID: id}, Engine: eng}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// streamer publishes n tokens (waiting on gate before each when non-nil)
// and answers with their concatenation.
func streamer(n int, gate <-chan struct{}) engine.Engine {
	return engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
		text := ""
		for i := 1; i <= n; i++ {
			if gate != nil {
				select {
				case <-gate:
				case intr := <-h.Interrupts():
					return b, engine.Interrupted(intr)
				case <-ctx.Done():
					return b, ctx.Err()
				}
			}
			tok := fmt.Sprintf("tok%d ", i)
			text += tok
			if err := h.Publish(ctx, engine.Token{Actor: "streamer", Text: tok}); err != nil {
				return b, err
			}
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, text))
		return b, nil
	})
}

// blocker works until interrupted (ignoreInterrupts: until its context ends).
func blocker(ignoreInterrupts bool, started chan<- string) engine.Engine {
	return engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
		if started != nil {
			started <- run.ID
		}
		intrs := h.Interrupts()
		if ignoreInterrupts {
			intrs = nil
		}
		select {
		case intr := <-intrs:
			return b, engine.Interrupted(intr)
		case <-ctx.Done():
			return b, ctx.Err()
		}
	})
}

// asker checkpoints, asks a question, and answers with the reply.
type asker struct{}

func (asker) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true, EmitsUserPrompt: true}
}

func (asker) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	if run.ResumeFrom != nil {
		b = engine.RestoreBoard(run.ResumeFrom.Board)
	} else if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: "ask", Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
		return b, err
	}
	reply, err := h.AskUser(ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("what is your name?")}, Source: "asker"})
	if err != nil {
		return b, err
	}
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "hello "+reply.Text()))
	return b, nil
}

func send(t *testing.T, r *Runtime, agentID, text string) run.Task {
	t.Helper()
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: agentID, Message: model.NewText(model.RoleUser, text)})
	if err != nil {
		t.Fatalf("send %q to %s: %v", text, agentID, err)
	}
	return sub.Task
}

func wait(t *testing.T, r *Runtime, id string) run.Task {
	t.Helper()
	task, err := r.Wait(ctxT(t), id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return task
}

// readAll reads a stream until EOF or until run.end when stopAtEnd.
func readAll(t *testing.T, r *Runtime, runID string, after int64, stopAtEnd bool) []run.Event {
	t.Helper()
	st, err := r.OpenStream(ctxT(t), runID, after)
	if err != nil {
		t.Fatalf("open stream of %s after %d: %v", runID, after, err)
	}
	defer st.Close()
	ctx := ctxT(t) // one deadline for the whole read
	var out []run.Event
	for {
		evs, err := st.Next(ctx, 64, time.Second)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read stream of %s: %v", runID, err)
		}
		for _, ev := range evs {
			out = append(out, ev)
			if stopAtEnd && ev.Type == EventRunEnd {
				return out
			}
		}
	}
}

// checkDense asserts seqs after+1, after+2, … and valid JSON data with the
// framing members.
func checkDense(t *testing.T, evs []run.Event, after int64) {
	t.Helper()
	for i, ev := range evs {
		if want := after + int64(i) + 1; ev.Seq != want {
			t.Fatalf("event %d has seq %d, want %d (types %v)", i, ev.Seq, want, types(evs))
		}
		var d struct {
			RunID string `json:"run_id"`
			Seq   int64  `json:"seq"`
			Type  string `json:"type"`
		}
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("event %d data %s: %v", ev.Seq, ev.Data, err)
		}
		if d.Seq != ev.Seq || d.Type != ev.Type || d.RunID != ev.RunID {
			t.Fatalf("event %d data %s does not match its frame (%s, %d, %s)", ev.Seq, ev.Data, ev.RunID, ev.Seq, ev.Type)
		}
	}
}

func types(evs []run.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}
