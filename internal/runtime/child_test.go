package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// stepper runs its steps one after another, each as a child run through
// the host's engine.ChildRunner, checkpointing after each; resumed, it
// runs only the steps after its checkpoint. With local, it runs them in
// its own process under the parent's host instead (for comparison).
type stepper struct {
	steps []engine.Engine
	local bool
}

func (stepper) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true}
}

func (s stepper) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	done := 0
	if cp := run.ResumeFrom; cp != nil {
		b, done = engine.RestoreBoard(cp.Board), cp.Iteration
	}
	cr, ok := h.(engine.ChildRunner)
	if !ok {
		return b, errdefs.NotAvailablef("host %T runs no child runs", h)
	}
	for i := done; i < len(s.steps); i++ {
		step := "s" + itoa(i+1)
		cb := engine.NewBoard()
		cb.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "do "+step))
		c := engine.ChildRun{Key: step + "/1", Step: step, Run: engine.Run{ParentRunID: run.ID}, Host: dropEvents{h}}
		var res *engine.Board
		if s.local {
			c.Run.ID = run.ID + "/" + c.Key
			res, err = s.steps[i].Execute(ctx, c.Run, c.Host, cb)
		} else {
			res, err = cr.RunChild(ctx, c, s.steps[i], cb)
		}
		if err != nil {
			return b, err
		}
		msgs := res.Channel(engine.MainChannel)
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, step+": "+msgs[len(msgs)-1].Text()))
		if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: step, Iteration: i + 1, Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
			return b, err
		}
	}
	return b, nil
}

// dropEvents is a parent's side of a child that keeps none of its events
// (the graph engine nests them under the step).
type dropEvents struct{ engine.Host }

func (dropEvents) Publish(context.Context, engine.Event) error { return nil }

// A child run is a task of its own: linked to its parent, in a context of
// its own holding its transcript, with an event log of its own.
func TestChildRunIsATaskOfItsOwn(t *testing.T) {
	logModes(t, func(t *testing.T) {
		r := newTestRuntime(t, nil, testAgent("p", stepper{steps: []engine.Engine{counter{n: 2}, counter{n: 3}}}))
		parent := wait(t, r, send(t, r, "p", "go").ID)
		if parent.State != run.StateCompleted {
			t.Fatalf("parent %s: %+v", parent.State, parent.Error)
		}
		for i, step := range []string{"s1", "s2"} {
			id := childRunID(parent.ID, step+"/1", 0)
			c, err := r.GetTask(ctxT(t), id)
			if err != nil {
				t.Fatalf("child %s: %v", step, err)
			}
			if c.State != run.StateCompleted || c.Metadata[engine.MetaParentRunID] != parent.ID || c.Metadata[engine.MetaParentStep] != step ||
				c.ContextID == parent.ContextID || c.AgentID != "p" {
				t.Fatalf("child %s: %+v", step, c)
			}
			page, err := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: c.ContextID})
			if err != nil {
				t.Fatal(err)
			}
			want := "counted to " + itoa(i+2)
			if len(page.Messages) != 2 || page.Messages[0].Text() != "do "+step || page.Messages[1].Text() != want {
				t.Fatalf("child %s transcript: %+v", step, page.Messages)
			}
			evs := readAll(t, r, id, 0, true)
			checkDense(t, evs, 0)
			got := strings.Join(types(evs), " ")
			wantTypes := "run.start status" + strings.Repeat(" delta", i+2) + " status run.end"
			if got != wantTypes {
				t.Fatalf("child %s events: %s, want %s", step, got, wantTypes)
			}
		}
	})
}

// A replica dies during a parent's second step: the survivor resumes the
// parent after its first step and the second step's child from the
// child's own checkpoint, and the first step never runs again.
func TestChildRunResumesFromItsCheckpoint(t *testing.T) {
	sharedStores(t, testChildRunResumesFromItsCheckpoint)
}

func testChildRunResumesFromItsCheckpoint(t *testing.T, shared store.Store) {
	first := make(chan int, 4)
	second := make(chan int, 4)
	step := make(chan struct{})
	eng := stepper{steps: []engine.Engine{counter{n: 2, started: first}, counter{n: 6, step: step, started: second}}}
	ka := &killable{Store: shared}
	a := replica(t, ka, "A", eng)
	b := replica(t, shared, "B", eng)

	task := send(t, a, "c", "go")
	if from := <-second; from != 1 {
		t.Fatalf("second step started at %d", from)
	}
	for range 3 { // the third is taken once the second checkpoint is stored
		step <- struct{}{}
	}
	ka.dead.Store(true)
	a.crash()

	if from := <-second; from < 3 {
		t.Fatalf("the second step's child resumed at %d, want after its checkpoint 2", from)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case step <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	done := wait(t, b, task.ID)
	if done.State != run.StateCompleted {
		t.Fatalf("parent %s: %+v", done.State, done.Error)
	}
	if n := len(first); n != 1 {
		t.Fatalf("the first step ran %d times, want once", n)
	}
	c, err := shared.GetTask(ctxT(t), childRunID(task.ID, "s2/1", 0))
	if err != nil {
		t.Fatal(err)
	}
	if c.State != run.StateCompleted || c.Attempt != 2 {
		t.Fatalf("second child: %s in attempt %d, want completed in attempt 2", c.State, c.Attempt)
	}
	evs := readAll(t, b, c.ID, 0, false)
	checkDense(t, evs, 0)
	if got := strings.Count(strings.Join(types(evs), " "), "run.start"); got != 2 {
		t.Fatalf("second child's log has %d attempts, want 2: %v", got, types(evs))
	}
}
