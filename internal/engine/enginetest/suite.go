package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// Case is what an engine author hands the suite: a fresh engine and the
// inputs that drive it down each exit path. Each input func is called
// once per execution and must return fresh values (a new Board, new
// Attributes) each time.
type Case struct {
	// Engine is the engine under test; the factory builds a new one for
	// every sub-test.
	Engine engine.Engine
	// Succeed returns inputs under which Execute completes with nil error
	// (and, for an engine declaring EmitsCheckpoint, writes at least one
	// checkpoint). Required.
	Succeed func() Input
	// Fail returns inputs under which Execute fails with an error that is
	// not an interrupt. Nil skips the failure path.
	Fail func() Input
	// Block returns inputs under which Execute publishes an event (a
	// step's start) and then keeps working until it is interrupted or its ctx ends (a step
	// that waits on something that never comes). It drives the interrupt,
	// cancel and deadline paths; nil skips them, which an engine that can
	// run for long should never do.
	Block func() Input
	// Timeout bounds each wait of the suite: for the first event, and for
	// Execute to return after an interrupt or cancellation. Default 5s.
	Timeout time.Duration
	// Deadline is the ctx deadline of the deadline path. Default 50ms.
	Deadline time.Duration
}

// Input is one execution's arguments. An empty Run.ID is filled in by the
// suite; Board nil means engine.NewBoard().
type Input struct {
	Run   engine.Run
	Board *engine.Board
	// AskUser answers the engine's prompts on this execution; nil answers
	// NotAvailable.
	AskUser func(ctx context.Context, prompt engine.UserPrompt) (engine.UserReply, error)
}

// Names of the attribute and board var the suite plants to detect
// mutation and silent restarts.
const (
	probeAttr = "enginetest.probe"
	resumeVar = "__enginetest_resume_marker"
)

// RunSuite runs the engine contract suite as sub-tests of t. factory is
// called at the start of every sub-test.
func RunSuite(t *testing.T, factory func(t testing.TB) Case) {
	t.Helper()
	runSuite(realT{t}, factory)
}

// suiteT is what the suite needs of a test: testing.TB plus sub-tests.
// It exists so the suite's own tests can run it under a harness that
// records failures instead of failing.
type suiteT interface {
	testing.TB
	Run(name string, f func(suiteT)) bool
}

type realT struct{ *testing.T }

// Run runs f as a real sub-test.
func (r realT) Run(name string, f func(suiteT)) bool {
	return r.T.Run(name, func(t *testing.T) { f(realT{t}) })
}

func runSuite(t suiteT, factory func(t testing.TB) Case) {
	t.Run("Success", func(t suiteT) { checkSuccess(t, factory(t)) })
	t.Run("Failure", func(t suiteT) { checkFailure(t, factory(t)) })
	t.Run("Interrupt", func(t suiteT) { checkInterrupt(t, factory(t)) })
	t.Run("Cancel", func(t suiteT) { checkCancel(t, factory(t)) })
	t.Run("Deadline", func(t suiteT) { checkDeadline(t, factory(t)) })
	t.Run("ResumeForeignExecID", func(t suiteT) { checkResumeForeign(t, factory(t)) })
	t.Run("ResumeUnsupported", func(t suiteT) { checkResumeUnsupported(t, factory(t)) })
	t.Run("ResumeOwnCheckpoint", func(t suiteT) { checkResumeOwn(t, factory) })
}

// execution is one Execute call in progress, with what it was given.
type execution struct {
	t      suiteT
	c      Case
	host   *RecordingHost
	run    engine.Run
	attrs  map[string]string // what run.Attributes must still hold
	resume []byte            // JSON of *run.ResumeFrom before Execute
	cancel context.CancelFunc
	done   chan struct{}
	board  *engine.Board
	err    error
	// published is how many events existed when Execute returned.
	published int
}

// start launches Execute in a goroutine on the inputs of in, under ctx.
func start(t suiteT, c Case, ctx context.Context, name string, in Input) *execution {
	t.Helper()
	if in.Run.ID == "" {
		in.Run.ID = "enginetest-" + name
	}
	if in.Board == nil {
		in.Board = engine.NewBoard()
	}
	attrs := maps.Clone(in.Run.Attributes)
	if attrs == nil {
		attrs = make(map[string]string, 1)
	}
	attrs[probeAttr] = name
	in.Run.Attributes = maps.Clone(attrs)

	host := NewRecordingHost()
	host.AskUserFn = in.AskUser
	ctx, cancel := context.WithCancel(ctx)
	x := &execution{t: t, c: c, host: host, run: in.Run, attrs: attrs, cancel: cancel, done: make(chan struct{})}
	if in.Run.ResumeFrom != nil {
		x.resume = mustJSON(t, in.Run.ResumeFrom)
	}
	go func() {
		defer close(x.done)
		x.board, x.err = c.Engine.Execute(ctx, in.Run, host, in.Board)
		x.published = len(host.Events())
	}()
	t.Cleanup(func() {
		x.cancel()
		select {
		case <-x.done:
			x.checkNoLatePublish()
		case <-time.After(c.timeout()):
			// already reported by wait; an engine deaf to ctx is abandoned
		}
	})
	return x
}

// run executes in to completion.
func run(t suiteT, c Case, name string, in Input) *execution {
	t.Helper()
	x := start(t, c, t.Context(), name, in)
	x.wait("Execute")
	return x
}

func (c Case) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 5 * time.Second
}

// wait waits for Execute to return. If it does not within the timeout the
// engine is reported as ignoring what happened, its ctx is cancelled, and
// the sub-test stops once it returns.
func (x *execution) wait(after string) {
	x.t.Helper()
	select {
	case <-x.done:
		x.checkInputsUntouched()
		return
	case <-time.After(x.c.timeout()):
	}
	x.t.Errorf("Execute did not return within %v after %s", x.c.timeout(), after)
	x.cancel()
	select {
	case <-x.done:
	case <-time.After(x.c.timeout()):
		x.t.Errorf("Execute ignores ctx cancellation too; abandoning it")
	}
	x.t.FailNow()
}

// awaitStart waits for the first event; an engine that publishes none
// before it blocks fails the sub-test.
func (x *execution) awaitStart() {
	x.t.Helper()
	ctx, cancel := context.WithTimeout(x.t.Context(), x.c.timeout())
	defer cancel()
	if _, err := x.host.WaitFor(ctx, func(engine.Event) bool { return true }); err != nil {
		select {
		case <-x.done:
			x.t.Fatalf("Execute returned (err=%v) without publishing an event", x.err)
		default:
		}
		x.t.Errorf("no event within %v", x.c.timeout())
		x.cancel()
		<-x.done
		x.t.FailNow()
	}
}

func (x *execution) checkInputsUntouched() {
	x.t.Helper()
	if !maps.Equal(x.run.Attributes, x.attrs) {
		x.t.Errorf("Execute mutated run.Attributes: got %v, want %v", x.run.Attributes, x.attrs)
	}
	if x.resume != nil {
		if now := mustJSON(x.t, x.run.ResumeFrom); string(now) != string(x.resume) {
			x.t.Errorf("Execute mutated *run.ResumeFrom:\nbefore %s\nafter  %s", x.resume, now)
		}
	}
}

func (x *execution) checkNoLatePublish() {
	x.t.Helper()
	if evs := x.host.Events(); len(evs) > x.published {
		x.t.Errorf("engine published %d event(s) after Execute returned (first: %s)",
			len(evs)-x.published, Describe(evs[x.published]))
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

func checkSuccess(t suiteT, c Case) {
	requireSucceed(t, c)
	x := run(t, c, "success", c.Succeed())
	if x.err != nil {
		t.Fatalf("Execute on the Succeed inputs: %v", x.err)
	}
	if x.board == nil {
		t.Errorf("Execute succeeded but returned a nil board")
	}
	checkEvents(t, x.host.Events())
	checkCapabilitiesHonoured(t, c, x)
}

func checkFailure(t suiteT, c Case) {
	if c.Fail == nil {
		t.Skip("Case.Fail not set")
	}
	x := run(t, c, "failure", c.Fail())
	switch {
	case x.err == nil:
		t.Errorf("Execute on the Fail inputs returned nil error")
	case errdefs.IsInterrupted(x.err):
		t.Errorf("Execute on the Fail inputs returned an interrupt: %v", x.err)
	}
	checkEvents(t, x.host.Events())
}

func checkInterrupt(t suiteT, c Case) {
	requireBlock(t, c)
	sent := engine.Interrupt{Cause: engine.CauseUserCancel, Detail: "enginetest"}
	x := start(t, c, t.Context(), "interrupt", c.Block())
	x.awaitStart()
	x.host.Fire(sent)
	x.wait("an interrupt")
	if !errdefs.IsInterrupted(x.err) {
		t.Errorf("after an interrupt Execute returned %v (class %q), want an errdefs.IsInterrupted error",
			x.err, errdefs.ClassOf(x.err))
	}
	var ie engine.InterruptedError
	if !errors.As(x.err, &ie) {
		t.Errorf("error %v does not unwrap to engine.InterruptedError", x.err)
	} else if ie.Interrupt != sent {
		t.Errorf("InterruptedError carries %+v, want the sent %+v", ie.Interrupt, sent)
	}
	checkEvents(t, x.host.Events())
}

func checkCancel(t suiteT, c Case) {
	requireBlock(t, c)
	x := start(t, c, t.Context(), "cancel", c.Block())
	x.awaitStart()
	x.cancel()
	x.wait("ctx cancellation")
	if !errors.Is(x.err, context.Canceled) && !errdefs.IsAborted(x.err) {
		t.Errorf("after ctx cancellation Execute returned %v, want context.Canceled (or an Aborted error)", x.err)
	}
	checkEvents(t, x.host.Events())
}

func checkDeadline(t suiteT, c Case) {
	requireBlock(t, c)
	d := c.Deadline
	if d <= 0 {
		d = 50 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	x := start(t, c, ctx, "deadline", c.Block())
	x.wait("its ctx deadline")
	if !errors.Is(x.err, context.DeadlineExceeded) && !errdefs.IsTimeout(x.err) {
		t.Errorf("after the ctx deadline Execute returned %v, want context.DeadlineExceeded (or a Timeout error)", x.err)
	}
	checkEvents(t, x.host.Events())
}

func requireSucceed(t suiteT, c Case) {
	t.Helper()
	if c.Engine == nil || c.Succeed == nil {
		t.Fatalf("Case.Engine and Case.Succeed are required")
	}
}

func requireBlock(t suiteT, c Case) {
	t.Helper()
	if c.Block == nil {
		t.Skip("Case.Block not set")
	}
}
