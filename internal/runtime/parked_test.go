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
	"agentd/internal/store/memstore"
)

// politeAsker is shaped like a flow with on_interrupt and on_timeout
// handlers: it asks a question that expires after timeout (the deadline
// in the prompt's data part), says goodbye when canceled — also while
// parked — and "too late" when the question expired.
type politeAsker struct{ timeout time.Duration }

func (politeAsker) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true, EmitsUserPrompt: true,
		HandlesParkedInterrupts: true, PromptDeadlines: true}
}

func (a politeAsker) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	say := func(text string) (*engine.Board, error) {
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, text))
		return b, nil
	}
	if run.ResumeFrom != nil {
		b = engine.RestoreBoard(run.ResumeFrom.Board)
	} else if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: "ask", Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
		return b, err
	}
	select {
	case <-h.Interrupts():
		return say("goodbye")
	default:
	}
	data, _ := model.DataPart(map[string]string{engine.PromptDeadlineKey: time.Now().Add(a.timeout).Format(time.RFC3339Nano)})
	reply, err := h.AskUser(ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("what is your name?"), data}, Source: "polite"})
	switch {
	case errdefs.IsTimeout(err):
		return say("too late")
	case err != nil:
		return b, err
	}
	return say("hello " + reply.Text())
}

// attempts returns the resumed member of every run.start of evs, and
// checks that each attempt is framed by one run.start and one run.end.
func attempts(t *testing.T, evs []run.Event) []string {
	t.Helper()
	checkDense(t, evs, 0)
	var out []string
	open := false
	for _, ev := range evs {
		switch ev.Type {
		case EventRunStart:
			if open {
				t.Fatalf("run.start at seq %d inside an attempt (types %v)", ev.Seq, types(evs))
			}
			var d RunStartData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			out, open = append(out, d.Resumed), true
		case EventRunEnd:
			if !open {
				t.Fatalf("run.end at seq %d outside an attempt (types %v)", ev.Seq, types(evs))
			}
			open = false
		default:
			if !open {
				t.Fatalf("%s at seq %d outside an attempt (types %v)", ev.Type, ev.Seq, types(evs))
			}
		}
	}
	if open {
		t.Fatalf("the log does not end with run.end (types %v)", types(evs))
	}
	return out
}

// A cancel of a parked run whose engine handles interrupts while parked
// resumes it with the interrupt pending: the engine says goodbye, and the
// run ends canceled with the goodbye as its status message, said once.
func TestCancelParkedRunGoesThroughItsEngine(t *testing.T) {
	logModes(t, func(t *testing.T) {
		r := newTestRuntime(t, nil, testAgent("polite", politeAsker{timeout: time.Hour}))
		task := send(t, r, "polite", "hi")
		if task = wait(t, r, task.ID); task.State != run.StateInputRequired {
			t.Fatalf("state %s, want input-required", task.State)
		}
		got, err := r.Cancel(ctxT(t), task.ID)
		if err != nil || got.State != run.StateWorking || got.Attempt != 2 {
			t.Fatalf("cancel: %v, %s attempt %d; want working attempt 2", err, got.State, got.Attempt)
		}
		final := wait(t, r, task.ID)
		if final.State != run.StateCanceled || final.StatusMessage == nil || final.StatusMessage.Text() != "goodbye" {
			t.Fatalf("final %s %+v, want canceled with the goodbye", final.State, final.StatusMessage)
		}
		if again, err := r.Cancel(ctxT(t), task.ID); err != nil || again.State != run.StateCanceled {
			t.Errorf("second cancel: %v, %s", err, again.State)
		}
		if got := attempts(t, readAll(t, r, task.ID, 0, false)); len(got) != 2 || got[1] != ResumedByCancel {
			t.Errorf("attempts resumed %q, want [\"\" cancel]", got)
		}
		page, err := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: task.ContextID})
		if err != nil {
			t.Fatal(err)
		}
		goodbyes := 0
		for _, m := range page.Messages {
			if m.Text() == "goodbye" {
				goodbyes++
			}
		}
		if goodbyes != 1 {
			t.Errorf("the transcript says goodbye %d times, want once", goodbyes)
		}
	})
}

// A parked prompt whose deadline passes unanswered resumes the run with
// signal timeout: AskUser answers a Timeout and the engine takes its
// timeout route. The deadline is read from the stored task, so a replica
// that never saw the run finds it (the first replica stopped), and of
// two replicas sweeping the same store exactly one resumes it.
func TestExpiredPromptResumesTheRun(t *testing.T) {
	st := memstore.New()
	opts := func() Options {
		return Options{Store: st, Agents: []*Agent{testAgent("polite", politeAsker{timeout: 300 * time.Millisecond})},
			SweepEvery: 20 * time.Millisecond, LeaseTTL: time.Second}
	}
	first := startRuntime(t, opts())
	task := send(t, first, "polite", "hi")
	if task = wait(t, first, task.ID); task.State != run.StateInputRequired {
		t.Fatalf("state %s, want input-required", task.State)
	}
	if d, ok := promptDeadline(task); !ok || time.Until(d) > time.Second {
		t.Fatalf("deadline %v (%v), want one within a second", d, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := startRuntime(t, opts()), startRuntime(t, opts())
	evs := readAll(t, a, task.ID, 0, false) // to the end of the run
	final, err := b.GetTask(ctxT(t), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != run.StateCompleted {
		t.Fatalf("final %s (%+v), want completed by the timeout route", final.State, final.Error)
	}
	page, err := st.ListMessages(ctxT(t), run.MessageQuery{ContextID: task.ContextID})
	if err != nil {
		t.Fatal(err)
	}
	if last := page.Messages[len(page.Messages)-1]; last.Text() != "too late" {
		t.Errorf("last message %q, want too late", last.Text())
	}
	if got := attempts(t, evs); len(got) != 2 || got[1] != engine.SignalTimeout {
		t.Errorf("attempts resumed %q, want [\"\" timeout]", got)
	}
}

// An answer before the deadline wins: the sweep leaves the run alone.
func TestAnswerBeforeThePromptExpires(t *testing.T) {
	r := startRuntime(t, Options{Store: memstore.New(), Agents: []*Agent{testAgent("polite", politeAsker{timeout: time.Hour})},
		SweepEvery: 10 * time.Millisecond})
	task := send(t, r, "polite", "hi")
	wait(t, r, task.ID)
	if _, err := r.Send(ctxT(t), SendRequest{AgentID: "polite", TaskID: task.ID, Message: model.NewText(model.RoleUser, "Ada")}); err != nil {
		t.Fatal(err)
	}
	if final := wait(t, r, task.ID); final.State != run.StateCompleted {
		t.Fatalf("final %s, want completed", final.State)
	}
	if got := attempts(t, readAll(t, r, task.ID, 0, false)); len(got) != 2 || got[1] != engine.SignalInput {
		t.Errorf("attempts resumed %q, want [\"\" input]", got)
	}
}
