package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// deadline bounds every wait on an event, so a broken ExecuteAll fails the
// test instead of hanging it.
const deadline = 10 * time.Second

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// probe builds tools that report when they start and block until released,
// and tracks how many run at once.
type probe struct {
	started  chan string
	release  chan struct{}
	inFlight atomic.Int32
	maxSeen  atomic.Int32
}

func newProbe() *probe {
	return &probe{started: make(chan string, 16), release: make(chan struct{})}
}

// tool returns a tool named name that announces its call ID, waits for one
// release (or its context) and answers with the call ID.
func (p *probe) tool(name string, flags tool.Flags) tool.Tool {
	return tool.New(tool.Spec{Name: name, Flags: flags}, func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		n := p.inFlight.Add(1)
		defer p.inFlight.Add(-1)
		for m := p.maxSeen.Load(); n > m && !p.maxSeen.CompareAndSwap(m, n); m = p.maxSeen.Load() {
		}
		c, _ := tool.CallFromContext(ctx)
		p.started <- c.ID
		select {
		case <-p.release:
			return tool.Text("done " + c.ID), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	})
}

// run starts ExecuteAll in a goroutine the test owns and returns a channel
// that yields its results.
func run(t *testing.T, ctx context.Context, reg *tool.Registry, calls []tool.Call) <-chan []tool.Result {
	t.Helper()
	done := make(chan []tool.Result, 1)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { done <- reg.ExecuteAll(ctx, calls) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return done
}

func calls(names ...string) []tool.Call {
	cs := make([]tool.Call, len(names))
	for i, n := range names {
		cs[i] = tool.Call{ID: fmt.Sprintf("c%d", i), Name: n}
	}
	return cs
}

func TestExecuteAllOverlapsParallelSafeCalls(t *testing.T) {
	p := newProbe()
	reg := &tool.Registry{MaxParallel: 3}
	if err := reg.Register(p.tool("par", tool.Flags{ParallelSafe: true})); err != nil {
		t.Fatal(err)
	}
	done := run(t, context.Background(), reg, calls("par", "par", "par"))
	// All three must be running at the same time before any is released:
	// with sequential execution the second would never start.
	for range 3 {
		receive(t, p.started, "a parallel call to start")
	}
	close(p.release)
	results := receive(t, done, "ExecuteAll")
	for i, r := range results {
		if want := fmt.Sprintf("done c%d", i); r.Content != want {
			t.Errorf("results[%d] = %q, want %q (call order)", i, r.Content, want)
		}
	}
}

func TestExecuteAllBoundsParallelism(t *testing.T) {
	p := newProbe()
	reg := &tool.Registry{MaxParallel: 2}
	if err := reg.Register(p.tool("par", tool.Flags{ParallelSafe: true})); err != nil {
		t.Fatal(err)
	}
	done := run(t, context.Background(), reg, calls("par", "par", "par", "par", "par"))
	receive(t, p.started, "first call")
	receive(t, p.started, "second call")
	for i := range 5 {
		p.release <- struct{}{}
		if i+2 < 5 {
			receive(t, p.started, "next call after a slot freed")
		}
	}
	results := receive(t, done, "ExecuteAll")
	if got := p.maxSeen.Load(); got != 2 {
		t.Errorf("max concurrent calls = %d, want exactly MaxParallel = 2", got)
	}
	for i, r := range results {
		if want := fmt.Sprintf("done c%d", i); r.Content != want {
			t.Errorf("results[%d] = %q, want %q", i, r.Content, want)
		}
	}
}

func TestExecuteAllRunsUnsafeCallsAlone(t *testing.T) {
	p := newProbe()
	var reg tool.Registry
	for _, tl := range []tool.Tool{
		p.tool("par", tool.Flags{ParallelSafe: true}),
		p.tool("seq", tool.Flags{}),
	} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	done := run(t, context.Background(), &reg, calls("par", "par", "seq", "par", "seq", "seq"))
	// Each step: the calls that must be running together, and nothing else.
	steps := [][]string{{"c0", "c1"}, {"c2"}, {"c3"}, {"c4"}, {"c5"}}
	for _, step := range steps {
		got := map[string]bool{}
		for range step {
			got[receive(t, p.started, fmt.Sprint("calls ", step))] = true
		}
		for _, id := range step {
			if !got[id] {
				t.Fatalf("started %v, want %v", got, step)
			}
		}
		if n := p.inFlight.Load(); int(n) != len(step) {
			t.Fatalf("%d calls in flight during step %v", n, step)
		}
		for range step {
			p.release <- struct{}{}
		}
	}
	results := receive(t, done, "ExecuteAll")
	for i, r := range results {
		if want := fmt.Sprintf("done c%d", i); r.Content != want || r.IsError {
			t.Errorf("results[%d] = %+v, want %q", i, r, want)
		}
	}
}

func TestExecuteAllMixedResultsInOrder(t *testing.T) {
	reg := builtins(t)
	cs := []tool.Call{
		{ID: "a", Name: tool.CalculatorName, Arguments: json.RawMessage(`{"expression":"1+1"}`)},
		{ID: "b", Name: "nope"},
		{ID: "c", Name: tool.CalculatorName, Arguments: json.RawMessage(`{"expression":"2*3"}`)},
		{ID: "d", Name: tool.CalculatorName, Arguments: json.RawMessage(`{}`)},
	}
	results := reg.ExecuteAll(context.Background(), cs)
	want := []string{"2", `nope: unknown tool "nope" (available: calculator, clock)`, "6", "calculator: argument /expression: missing property"}
	for i, r := range results {
		if r.Content != want[i] {
			t.Errorf("results[%d] = %q, want %q", i, r.Content, want[i])
		}
	}
	if got := reg.ExecuteAll(context.Background(), nil); len(got) != 0 {
		t.Errorf("ExecuteAll(nil) = %v", got)
	}
}

func TestExecuteAllCancellation(t *testing.T) {
	tests := []struct {
		label       string
		maxParallel int
		flags       tool.Flags // of the blocking first call
		calls       []string
	}{
		{"sequential", 0, tool.Flags{}, []string{"block", "clock", "clock", "block"}},
		{"waiting for a parallel slot", 1, tool.Flags{ParallelSafe: true}, []string{"block", "clock", "clock"}},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			p := newProbe()
			reg := &tool.Registry{MaxParallel: tt.maxParallel}
			for _, tl := range []tool.Tool{p.tool("block", tt.flags), tool.Clock(nil)} {
				if err := reg.Register(tl); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := run(t, ctx, reg, calls(tt.calls...))
			receive(t, p.started, "the blocking call")
			cancel()
			results := receive(t, done, "ExecuteAll")

			if r := results[0]; !r.IsError || r.Content != "block: context canceled" || !errdefs.IsAborted(r.Err) {
				t.Errorf("running call: %+v", r)
			}
			for i, r := range results[1:] {
				want := tt.calls[i+1] + ": not run: context canceled"
				if !r.IsError || r.Content != want || !errdefs.IsAborted(r.Err) {
					t.Errorf("results[%d] = %+v, want %q (aborted)", i+1, r, want)
				}
			}
		})
	}
}

func TestExecuteAllPastDeadline(t *testing.T) {
	reg := builtins(t)
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	for _, r := range reg.ExecuteAll(ctx, calls(tool.ClockName, tool.CalculatorName)) {
		if !r.IsError || !errdefs.IsTimeout(r.Err) {
			t.Errorf("result = %+v, want a timeout error result", r)
		}
	}
}
