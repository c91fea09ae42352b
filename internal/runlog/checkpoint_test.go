package runlog

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// failingStore refuses the next n Applies as unreachable.
type failingStore struct {
	store.Store
	n int
}

func (s *failingStore) Apply(ctx context.Context, c store.Change) error {
	if s.n > 0 {
		s.n--
		return errdefs.NotAvailable(errors.New("store unreachable"))
	}
	return s.Store.Apply(ctx, c)
}

func stagedCheckpoint(runID, text string) engine.Checkpoint {
	return engine.Checkpoint{ExecID: runID, Step: "s", Board: &engine.BoardSnapshot{},
		Payload: json.RawMessage(`{"text":"` + text + `"}`), Attributes: map[string]string{store.AttrAttempt: "1"}}
}

// newDurableLog returns an active, registered log of run runID whose task
// exists in st, and no flusher goroutine: writes happen when the test
// asks.
func newDurableLog(t *testing.T, st store.Store, runID string) (*Logs, *Log) {
	t.Helper()
	ls := New(Options{Store: st, Window: time.Hour})
	l := ls.New(runID)
	if err := ls.Register(l); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	task := run.Task{ID: runID, ContextID: "c", AgentID: "a", State: run.StateWorking, CreatedAt: now, UpdatedAt: now}
	if _, err := l.Commit(t.Context(), store.Change{TaskID: runID, CreateTask: &task}, nil, Entry{Type: "run.start", Body: map[string]int{"attempt": 1}}); err != nil {
		t.Fatal(err)
	}
	return ls, l
}

func checkpointTexts(t *testing.T, st store.Store, runID string) []string {
	t.Helper()
	cps, err := st.ListCheckpoints(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, cp := range cps {
		var p struct{ Text string }
		if err := json.Unmarshal(cp.Payload, &p); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, p.Text)
	}
	return texts
}

func wantTexts(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: checkpoints %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: checkpoints %q, want %q", what, got, want)
		}
	}
}

// A staged checkpoint is saved by the write that makes its event durable
// — a Flush or a state Commit — and not before; a newer one staged before
// that write replaces it: one checkpoint per write, not per event.
func TestStagedCheckpointIsWrittenWithItsEvents(t *testing.T) {
	st := shared(memstore.New())
	_, l := newDurableLog(t, st, "r")
	l.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"a"}`)), stagedCheckpoint("r", "a"))
	l.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"b"}`)), stagedCheckpoint("r", "ab"))
	wantTexts(t, "before any write", checkpointTexts(t, st, "r"))
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, "after a flush", checkpointTexts(t, st, "r"), "ab")

	l.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"c"}`)), stagedCheckpoint("r", "abc"))
	l.Append("step.complete", Object([]byte(`{"actor":"a"}`)))
	if _, err := l.Commit(t.Context(), store.Change{}, nil, Entry{Type: "run.end", Body: map[string]string{"state": "completed"}}); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, "after a commit", checkpointTexts(t, st, "r"), "ab", "abc")
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, "after a flush with nothing staged", checkpointTexts(t, st, "r"), "ab", "abc")
}

// A write that fails saves no checkpoint; the next write of the run saves
// the newest one with the events the failed write held.
func TestStagedCheckpointSurvivesAFailedWrite(t *testing.T) {
	st := &failingStore{Store: memstore.New()}
	_, l := newDurableLog(t, st, "r")
	l.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"a"}`)), stagedCheckpoint("r", "a"))
	st.n = 1
	if err := l.Flush(t.Context()); !errdefs.IsNotAvailable(err) {
		t.Fatalf("Flush through a failing store: %v, want NotAvailable", err)
	}
	wantTexts(t, "after the failed write", checkpointTexts(t, st, "r"))
	l.Append("step.complete", Object([]byte(`{"actor":"a"}`)))
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, "after the next write", checkpointTexts(t, st, "r"), "a")

	l.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"b"}`)), stagedCheckpoint("r", "ab"))
	st.n = 1
	_ = l.Flush(t.Context())
	l.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"c"}`)), stagedCheckpoint("r", "abc"))
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, "a newer checkpoint after a failed write", checkpointTexts(t, st, "r"), "a", "abc")
	page, err := st.ReadEvents(t.Context(), "r", 0, 100)
	if err != nil || page.LastSeq != 5 {
		t.Fatalf("log: last seq %d (%v), want 5", page.LastSeq, err)
	}
}

// The flusher's batch over several runs saves each run's staged
// checkpoint with that run's events, in one write.
func TestFlusherBatchSavesEachRunsCheckpoint(t *testing.T) {
	st := shared(memstore.New())
	ls, a := newDurableLog(t, st, "ra")
	b := ls.New("rb")
	if err := ls.Register(b); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	task := run.Task{ID: "rb", ContextID: "c", AgentID: "a", State: run.StateWorking, CreatedAt: now, UpdatedAt: now}
	if _, err := b.Commit(t.Context(), store.Change{TaskID: "rb", CreateTask: &task}, nil, Entry{Type: "run.start", Body: map[string]int{"attempt": 1}}); err != nil {
		t.Fatal(err)
	}
	a.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"x"}`)), stagedCheckpoint("ra", "x"))
	b.AppendCheckpointed(EventDelta, Object([]byte(`{"text":"y"}`)), stagedCheckpoint("rb", "y"))
	b.Append("step.complete", Object([]byte(`{"actor":"a"}`)))
	ls.flusher.flush(t.Context(), &ls.flusher.firstBatch, ls.flusher.first) // first deltas: the first-delta writer's batch
	wantTexts(t, "run ra after a batch", checkpointTexts(t, st, "ra"), "x")
	wantTexts(t, "run rb after a batch", checkpointTexts(t, st, "rb"), "y")
	for _, l := range []*Log{a, b} {
		if l.flight != nil || l.staged != nil || l.persisted != l.last() {
			t.Errorf("run %s after the batch: flight %v, staged %v, persisted %d of %d", l.runID, l.flight, l.staged, l.persisted, l.last())
		}
	}
}
