package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// steered counts like counter, but is pause-aware and takes feedback:
// before each step it asks whether to pause, then appends the feedback
// the host hands it to the board and reports its text on fed.
type steered struct {
	n    int
	step chan struct{}
	fed  chan string
}

func (steered) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true}
}

func (steered) PausesAtCheckpoints() {}

func (s steered) Execute(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	from := 1
	if cp := run.ResumeFrom; cp != nil {
		b = engine.RestoreBoard(cp.Board)
		from = cp.Iteration + 1
	}
	for i := from; i <= s.n; i++ {
		if err := engine.PauseRequested(h); err != nil {
			return b, err
		}
		for _, m := range engine.TakeFeedback(h) {
			b.AppendChannelMessage(engine.MainChannel, m)
			s.fed <- m.Text()
		}
		select {
		case <-s.step:
		case <-ctx.Done():
			return b, ctx.Err()
		case intr := <-h.Interrupts():
			return b, engine.Interrupted(intr)
		}
		if err := h.Publish(ctx, engine.Token{Actor: "steered", Text: "tok" + strconv.Itoa(i) + " "}); err != nil {
			return b, err
		}
		if err := h.Checkpoint(ctx, engine.Checkpoint{ExecID: run.ID, Step: fmt.Sprint(i), Iteration: i, Board: b.Snapshot(), Timestamp: time.Now()}); err != nil {
			return b, err
		}
	}
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "counted to "+strconv.Itoa(s.n)))
	return b, nil
}

// pace steps eng every few milliseconds until the test ends.
func pace(t *testing.T, step chan struct{}) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case step <- struct{}{}:
				time.Sleep(3 * time.Millisecond)
			case <-stop:
				return
			}
		}
	}()
}

// fedOnce waits for the engine to take feedback text, and fails if it
// takes anything else.
func fedOnce(t *testing.T, fed chan string, text string) {
	t.Helper()
	select {
	case got := <-fed:
		if got != text {
			t.Fatalf("the engine took feedback %q, want %q", got, text)
		}
	case <-time.After(testTimeout):
		t.Fatalf("the engine never took feedback %q", text)
	}
}

// signalsLogged lists the signal events of a run's log as type:text.
func signalsLogged(t *testing.T, r *Runtime, id string) []string {
	t.Helper()
	var out []string
	for _, ev := range readAll(t, r, id, 0, false) {
		if ev.Type != EventSignal {
			continue
		}
		var d SignalData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Signal+":"+d.Text)
	}
	return out
}

// feedbackInTranscript counts the transcript messages of run id saying text.
func feedbackInTranscript(t *testing.T, r *Runtime, task run.Task, text string) int {
	t.Helper()
	page, err := r.st.ListMessages(ctxT(t), run.MessageQuery{ContextID: task.ContextID, TaskID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range page.Messages {
		if m.Role == model.RoleUser && m.Text() == text {
			n++
		}
	}
	return n
}

// Pause and feedback sent to a replica that does not execute the run
// reach the owner through the store: the engine takes the feedback once,
// the run pauses at its next boundary, and the paused run resumes (on the
// other replica) without the feedback coming again.
func TestSignalsAcrossReplicas(t *testing.T) { sharedStores(t, testSignalsAcrossReplicas) }

func testSignalsAcrossReplicas(t *testing.T, shared store.Store) {
	step, fed := make(chan struct{}), make(chan string, 8)
	eng := steered{n: 300, step: step, fed: fed}
	a := replica(t, shared, "A", eng)
	b := replica(t, shared, "B", eng)
	task := send(t, a, "c", "count")
	pace(t, step)

	got, err := b.Signal(ctxT(t), task.ID, Signal{Type: SignalFeedback, Text: "steer left"})
	if err != nil || got.State != run.StateWorking {
		t.Fatalf("feedback through B: %s %v, want the run still working", got.State, err)
	}
	fedOnce(t, fed, "steer left")
	if got, err = b.Signal(ctxT(t), task.ID, Signal{Type: SignalPause, Text: "lunch"}); err != nil || got.State != run.StateWorking {
		t.Fatalf("pause through B: %s %v", got.State, err)
	}
	paused := wait(t, a, task.ID)
	if !Paused(paused) || paused.Attempt != 1 {
		t.Fatalf("after the pause through B: %s attempt %d, paused %v", paused.State, paused.Attempt, Paused(paused))
	}
	if d, _ := pausedData(paused); d.Reason != "lunch" || len(d.Feedback) != 0 {
		t.Fatalf("paused data %+v, want the note and no feedback left", d)
	}
	if len(paused.Signals) != 0 {
		t.Fatalf("signals left on the paused task: %+v", paused.Signals)
	}

	if _, err := b.Signal(ctxT(t), task.ID, Signal{Type: SignalResume}); err != nil {
		t.Fatalf("resume on B: %v", err)
	}
	done := wait(t, b, task.ID)
	if done.State != run.StateCompleted || done.Attempt != 2 {
		t.Fatalf("after the resume: %s attempt %d", done.State, done.Attempt)
	}
	select {
	case again := <-fed:
		t.Fatalf("the engine took feedback %q again", again)
	default:
	}
	if n := feedbackInTranscript(t, b, done, "steer left"); n != 1 {
		t.Fatalf("the feedback is %d times in the transcript, want once", n)
	}
	want := []string{"feedback:steer left", "pause:lunch", "resume:"}
	if got := signalsLogged(t, b, task.ID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("signal events %v, want %v", got, want)
	}
}

// Feedback recorded for a run whose owner died before taking it reaches
// the attempt that takes the run over, once.
func TestFeedbackSurvivesOwnerDeath(t *testing.T) { sharedStores(t, testFeedbackSurvivesOwnerDeath) }

func testFeedbackSurvivesOwnerDeath(t *testing.T, shared store.Store) {
	step, fed := make(chan struct{}), make(chan string, 8)
	eng := steered{n: 40, step: step, fed: fed}
	ka := &killable{Store: shared}
	a := replica(t, ka, "A", eng)
	task := send(t, a, "c", "count")
	step <- struct{}{}
	step <- struct{}{}
	ka.dead.Store(true)
	a.crash()

	b := replica(t, shared, "B", eng)
	got, err := b.Signal(ctxT(t), task.ID, Signal{Type: SignalFeedback, Text: "steer home"})
	if err != nil || got.State != run.StateWorking || len(got.Signals) != 1 {
		t.Fatalf("feedback through B while A is dead: %s %v, signals %+v", got.State, err, got.Signals)
	}
	pace(t, step)
	fedOnce(t, fed, "steer home")
	done := wait(t, b, task.ID)
	if done.State != run.StateCompleted || done.Attempt != 2 || len(done.Signals) != 0 {
		t.Fatalf("after the takeover: %s attempt %d, signals %+v", done.State, done.Attempt, done.Signals)
	}
	select {
	case again := <-fed:
		t.Fatalf("the engine took feedback %q again", again)
	default:
	}
	if n := feedbackInTranscript(t, b, done, "steer home"); n != 1 {
		t.Fatalf("the feedback is %d times in the transcript, want once", n)
	}
}

// diesAfterFeedback is a replica's store that dies right after saving the
// first checkpoint that holds a feedback: the replica's removal of the
// feedback from the task never happens.
type diesAfterFeedback struct {
	killable
	text string
}

func (d *diesAfterFeedback) SaveCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	if err := d.killable.SaveCheckpoint(ctx, cp); err != nil {
		return err
	}
	d.saved(cp)
	return nil
}

// Apply: a checkpoint written with the events before it (host.Checkpoint)
// kills the store too.
func (d *diesAfterFeedback) Apply(ctx context.Context, c store.Change) error {
	if err := d.killable.Apply(ctx, c); err != nil {
		return err
	}
	for _, cp := range c.Checkpoints {
		d.saved(cp)
	}
	return nil
}

// saved kills the store once a checkpoint holding the feedback is stored.
func (d *diesAfterFeedback) saved(cp engine.Checkpoint) {
	for _, m := range cp.Board.Channels[engine.MainChannel] {
		if m.Text() == d.text {
			d.dead.Store(true)
		}
	}
}

// The owner took a relayed feedback and checkpointed it, then died before
// removing it from the task: the attempt that takes the run over finds it
// in the checkpoint it resumes from and does not hand it on again.
func TestRelayedFeedbackNotTakenTwice(t *testing.T) {
	sharedStores(t, testRelayedFeedbackNotTakenTwice)
}

func testRelayedFeedbackNotTakenTwice(t *testing.T, shared store.Store) {
	step, fed := make(chan struct{}), make(chan string, 8)
	eng := steered{n: 40, step: step, fed: fed}
	da := &diesAfterFeedback{killable: killable{Store: shared}, text: "steer once"}
	a := replica(t, da, "A", eng)
	b := replica(t, shared, "B", eng)
	task := send(t, a, "c", "count")
	step <- struct{}{}
	if _, err := b.Signal(ctxT(t), task.ID, Signal{Type: SignalFeedback, Text: "steer once"}); err != nil {
		t.Fatal(err)
	}
	pace(t, step)
	fedOnce(t, fed, "steer once")
	for !da.dead.Load() {
		time.Sleep(5 * time.Millisecond)
	}
	a.crash()
	if pending := getTaskT(t, shared, task.ID).Signals; len(pending) != 1 {
		t.Fatalf("signals pending after A died: %+v, want the feedback it could not remove", pending)
	}
	done := wait(t, b, task.ID)
	if done.State != run.StateCompleted || done.Attempt != 2 || len(done.Signals) != 0 {
		t.Fatalf("after the takeover: %s attempt %d, signals %+v", done.State, done.Attempt, done.Signals)
	}
	select {
	case again := <-fed:
		t.Fatalf("the engine took feedback %q again", again)
	default:
	}
	if n := feedbackInTranscript(t, b, done, "steer once"); n != 1 {
		t.Fatalf("the feedback is %d times in the transcript, want once", n)
	}
}

func getTaskT(t *testing.T, st store.Store, id string) run.Task {
	t.Helper()
	task, err := st.GetTask(ctxT(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}
