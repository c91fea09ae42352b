package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testConcurrency(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"EventsOfManyRuns":             testConcurrentRuns,
		"EventsOfOneRunRacing":         testConcurrentOneRun,
		"TaskUpdatersOneWinPerVersion": testConcurrentUpdates,
		"TranscriptAppenders":          testConcurrentTranscript,
	})
}

// parallel runs fn(0…n-1) in n goroutines and waits for all of them.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i)
		}()
	}
	wg.Wait()
}

func testConcurrentRuns(t *testing.T, s store.Store) {
	const runs, batches, batch = 8, 10, 3
	ctx := t.Context()
	parallel(runs, func(i int) {
		run := fmt.Sprintf("r-%d", i)
		for b := range int64(batches) {
			if err := s.Apply(ctx, store.Change{Events: runEvents(run, b*batch+1, (b+1)*batch)}); err != nil {
				t.Errorf("appending batch %d of %s: %v", b, run, err)
				return
			}
		}
	})
	for i := range runs {
		run := fmt.Sprintf("r-%d", i)
		wantPage(t, run, readEvents(t, ctx, s, run, 0, 1000), span(1, batches*batch), batches*batch, 0)
	}
}

// testConcurrentOneRun races appenders of one run: each reads the log's end
// and appends the next seq, retrying on Conflict; every seq must be written
// exactly once.
func testConcurrentOneRun(t *testing.T, s store.Store) {
	const writers, each = 4, 15
	ctx := t.Context()
	parallel(writers, func(w int) {
		for written := 0; written < each; {
			page, err := s.ReadEvents(ctx, "r-1", 0, 1)
			if err != nil {
				t.Errorf("writer %d: ReadEvents: %v", w, err)
				return
			}
			next := page.LastSeq + 1
			err = s.Apply(ctx, store.Change{Events: runEvents("r-1", next, next)})
			switch {
			case err == nil:
				written++
			case !errdefs.IsConflict(err):
				t.Errorf("writer %d: appending seq %d: got %v, want success or Conflict", w, next, err)
				return
			}
		}
	})
	wantPage(t, "r-1 after racing appenders", readEvents(t, ctx, s, "r-1", 0, 1000), span(1, writers*each), writers*each, 0)
}

func testConcurrentUpdates(t *testing.T, s store.Store) {
	const rounds, racers = 5, 3
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	for round := range rounds {
		base := getTask(t, ctx, s, "t-1")
		wins := make([]bool, racers)
		parallel(racers, func(i int) {
			upd := base
			upd.Metadata = map[string]any{"winner": i}
			err := s.Apply(ctx, store.Change{TaskID: "t-1", UpdateTask: &upd})
			switch {
			case err == nil:
				wins[i] = true
			case !errdefs.IsConflict(err):
				t.Errorf("round %d, racer %d: got %v, want success or Conflict", round, i, err)
			}
		})
		winner := slices.Index(wins, true)
		if n := len(slices.DeleteFunc(slices.Clone(wins), func(w bool) bool { return !w })); n != 1 {
			t.Fatalf("round %d: %d of %d racing updates of version %d won, want exactly one", round, n, racers, base.Version)
		}
		got := getTask(t, ctx, s, "t-1")
		if got.Version != base.Version+1 || fmt.Sprint(got.Metadata["winner"]) != fmt.Sprint(winner) {
			t.Fatalf("round %d: task version %d written by racer %v, want version %d by racer %d", round, got.Version, got.Metadata["winner"], base.Version+1, winner)
		}
	}
}

// testConcurrentTranscript appends to one context from several goroutines:
// positions stay dense and unique, and each Apply's messages stay together.
func testConcurrentTranscript(t *testing.T, s store.Store) {
	const writers, applies, batch = 4, 8, 3
	ctx := t.Context()
	parallel(writers, func(w int) {
		for a := range applies {
			msgs := textMessages("c-1", fmt.Sprintf("w%d-a%d", w, a), batch)
			if err := s.Apply(ctx, store.Change{TaskID: fmt.Sprintf("t-%d", w), Messages: msgs}); err != nil {
				t.Errorf("writer %d, apply %d: %v", w, a, err)
				return
			}
		}
	})
	page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1", Limit: 1000})
	wantPositions(t, "positions after concurrent appends", positions(page.Messages), span(1, writers*applies*batch))
	for i := 0; i < len(page.Messages); i += batch {
		for j := 1; j <= batch-1; j++ {
			first, m := page.Messages[i].ID, page.Messages[i+j].ID
			if m != first[:len(first)-1]+fmt.Sprint(j+1) {
				t.Fatalf("position %d holds %s after %s at %d: one Apply's messages must be consecutive", i+j+1, m, first, i+1)
			}
		}
	}
}
