package retention_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"agentd/internal/retention"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// finished creates n completed runs of two events each.
func finished(t *testing.T, s *memstore.Store, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		id := fmt.Sprintf("r-%d", i)
		task := run.Task{ID: id, ContextID: "c-" + id, AgentID: "a", State: run.StateCompleted, Attempt: 1, CreatedAt: time.Now()}
		evs := []run.Event{{RunID: id, Seq: 1, Type: "run.start", Data: []byte(`{}`)}, {RunID: id, Seq: 2, Type: "run.end", Data: []byte(`{}`)}}
		if err := s.Apply(ctx, store.Change{TaskID: id, CreateTask: &task, Events: evs}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRoundBatches: a round prunes every run that finished before the
// cutoff, batch after batch, reporting each batch; the next round finds
// nothing more.
func TestRoundBatches(t *testing.T) {
	s := memstore.New()
	finished(t, s, 5)
	var batches []store.Pruned
	p := retention.New(retention.Options{
		Store: s, MaxAge: time.Hour, Batch: 2, Interval: time.Hour,
		Now:    func() time.Time { return time.Now().Add(2 * time.Hour) },
		Report: func(got store.Pruned) { batches = append(batches, got) },
	})
	total, err := p.Round(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if total.Runs != 5 || total.Events != 10 || len(batches) != 3 {
		t.Fatalf("round: %+v in %d batches (%+v); want 5 runs, 10 events in batches of 2, 2, 1", total, len(batches), batches)
	}
	again, err := p.Round(t.Context())
	if err != nil || again.Runs != 0 {
		t.Fatalf("second round: %+v, %v; want nothing", again, err)
	}
}

// TestRoundKeepsYoungRuns: runs younger than MaxAge stay.
func TestRoundKeepsYoungRuns(t *testing.T) {
	s := memstore.New()
	finished(t, s, 3)
	p := retention.New(retention.Options{Store: s, MaxAge: time.Hour, Batch: 10, Interval: time.Hour})
	got, err := p.Round(t.Context())
	if err != nil || got.Runs != 0 {
		t.Fatalf("round: %+v, %v; want nothing pruned", got, err)
	}
}
