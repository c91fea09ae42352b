package pgstore_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// events returns the events from..to of runID; Data has spaces and an
// unsorted key order, which a JSONB column would not keep.
func events(runID string, from, to int64) []run.Event {
	var evs []run.Event
	for seq := from; seq <= to; seq++ {
		data := fmt.Sprintf(`{"seq": %d,  "run_id": %q, "z": 1, "a": [true]}`, seq, runID)
		evs = append(evs, run.Event{RunID: runID, Seq: seq, Type: "delta",
			Time: time.Unix(1_700_000_000, int64(seq)).UTC(), Data: json.RawMessage(data)})
	}
	return evs
}

func seqsOf(evs []run.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// Frames hold several events; reads that start or end inside a frame, and
// prunes that cut one, return exactly the asked-for events.
func TestReadEventsMidFrame(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	// Frames: 1..10, 11..20, and 21..620 cut at the 256-event cap.
	for _, b := range [][2]int64{{1, 10}, {11, 20}, {21, 620}} {
		if err := s.Apply(ctx, store.Change{Events: events("r", b[0], b[1])}); err != nil {
			t.Fatalf("Apply events %d..%d: %v", b[0], b[1], err)
		}
	}
	tests := []struct {
		name         string
		pruneThrough int64
		after        int64
		limit        int
		want         []int64
	}{
		{"inside one frame", 0, 5, 3, span(6, 8)},
		{"across frames", 0, 8, 5, span(9, 13)},
		{"from a frame's last event", 0, 10, 2, span(11, 12)},
		{"across the frame-size cap", 0, 270, 10, span(271, 280)},
		{"a full page over capped frames", 0, 100, 1000, span(101, 620)},
		{"to the end", 0, 615, 100, span(616, 620)},
		{"past the end", 0, 620, 100, nil},
		{"after a prune inside a frame", 15, 0, 3, span(16, 18)},
		{"after is beyond the prune", 15, 17, 2, span(18, 19)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.pruneThrough > 0 {
				if err := s.PruneEvents(ctx, "r", tt.pruneThrough); err != nil {
					t.Fatalf("PruneEvents(%d): %v", tt.pruneThrough, err)
				}
			}
			page, err := s.ReadEvents(ctx, "r", tt.after, tt.limit)
			if err != nil {
				t.Fatalf("ReadEvents(after %d, limit %d): %v", tt.after, tt.limit, err)
			}
			if got := seqsOf(page.Events); !slices.Equal(got, tt.want) {
				t.Fatalf("ReadEvents(after %d, limit %d): seqs %v, want %v", tt.after, tt.limit, got, tt.want)
			}
			if page.LastSeq != 620 {
				t.Errorf("LastSeq = %d, want 620", page.LastSeq)
			}
		})
	}
}

// The event log is the runtime's bytes: a replayed event is identical to
// the live one (json, not jsonb, keeps spacing and key order).
func TestReadEventsKeepsDataBytes(t *testing.T) {
	s := open(t)
	want := events("r", 1, 3)
	if err := s.Apply(t.Context(), store.Change{Events: want}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	page, err := s.ReadEvents(t.Context(), "r", 0, 0)
	if err != nil {
		t.Fatalf("ReadEvents: %v", err)
	}
	for i, e := range page.Events {
		if !bytes.Equal(e.Data, want[i].Data) || !e.Time.Equal(want[i].Time) || e.Type != want[i].Type || e.RunID != "r" {
			t.Errorf("event %d: got %+v (data %s), want %+v (data %s)", i, e, e.Data, want[i], want[i].Data)
		}
	}
}

// Two writers continue one run's log from the same seq at the same time:
// each round exactly one wins, the other gets Conflict, and the log stays
// dense.
func TestConcurrentAppendsToOneRun(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	const rounds, writers, batch = 20, 2, 5
	var last int64
	for round := range rounds {
		start := make(chan struct{})
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				<-start
				errs[w] = s.Apply(ctx, store.Change{Events: events("r", last+1, last+batch)})
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for w, err := range errs {
			switch {
			case err == nil:
				won++
			case !errdefs.IsConflict(err):
				t.Fatalf("round %d, writer %d: got %v, want success or Conflict", round, w, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d writers succeeded appending %d..%d, want exactly 1 (errors %v)", round, won, last+1, last+batch, errs)
		}
		last += batch
	}
	page, err := s.ReadEvents(ctx, "r", 0, 1000)
	if err != nil {
		t.Fatalf("ReadEvents: %v", err)
	}
	if got := seqsOf(page.Events); !slices.Equal(got, span(1, last)) || page.LastSeq != last {
		t.Fatalf("log after the race: seqs %v (last %d), want 1..%d", got, page.LastSeq, last)
	}
}
