package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testEvents(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"DenseSeqFromOne":         testEventsDense,
		"SeqMustContinue":         testEventsSeqConflict,
		"ReadAfterWithLimit":      testEventsRead,
		"LimitDefaultAndClamp":    testEventsLimits,
		"RunsAreIndependent":      testEventsRuns,
		"RoundTripsEveryField":    testEventsRoundTrip,
		"TimeDefaultsToNow":       testEventsTime,
		"Prune":                   testEventsPrune,
		"PruneBounds":             testEventsPruneBounds,
		"UnknownRunIsEmpty":       testEventsUnknownRun,
		"InvalidEventsAndQueries": testEventsInvalid,
	})
}

func readEvents(t *testing.T, ctx context.Context, s store.Store, run string, after int64, limit int) run.EventPage {
	t.Helper()
	page, err := s.ReadEvents(ctx, run, after, limit)
	wantNoError(t, err, fmt.Sprintf("ReadEvents(%s, after %d, limit %d)", run, after, limit))
	return page
}

// wantPage checks a page's seqs and bounds.
func wantPage(t *testing.T, what string, page run.EventPage, want []int64, lastSeq, pruned int64) {
	t.Helper()
	got := seqs(page.Events)
	if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%s: got seqs %v, want %v", what, got, want)
	}
	if page.LastSeq != lastSeq || page.PrunedThrough != pruned {
		t.Fatalf("%s: LastSeq %d, PrunedThrough %d; want %d and %d", what, page.LastSeq, page.PrunedThrough, lastSeq, pruned)
	}
}

func testEventsDense(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendEvents(t, ctx, s, "r-1", 1, 1)
	appendEvents(t, ctx, s, "r-1", 2, 4)
	appendEvents(t, ctx, s, "r-1", 5, 5)
	wantPage(t, "events after three appends", readEvents(t, ctx, s, "r-1", 0, 100), span(1, 5), 5, 0)
}

func testEventsSeqConflict(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendEvents(t, ctx, s, "r-1", 1, 3)
	cases := map[string][]run.Event{
		"gap":               runEvents("r-1", 5, 5),
		"repeat":            runEvents("r-1", 3, 4),
		"rewind":            runEvents("r-1", 1, 1),
		"zero seq":          runEvents("r-0", 0, 1),
		"gap inside batch":  append(runEvents("r-1", 4, 4), runEvents("r-1", 6, 6)...),
		"out of order":      append(runEvents("r-1", 5, 5), runEvents("r-1", 4, 4)...),
		"new run from 2":    runEvents("r-2", 2, 3),
		"new run twice one": append(runEvents("r-2", 1, 1), runEvents("r-2", 1, 1)...),
	}
	for _, name := range sortedKeys(cases) {
		err := s.Apply(ctx, store.Change{Events: cases[name]})
		wantClass(t, err, errdefs.ClassConflict, "appending events with a "+name)
		wantPage(t, "r-1 after a rejected append ("+name+")", readEvents(t, ctx, s, "r-1", 0, 100), span(1, 3), 3, 0)
		wantPage(t, "r-2 after a rejected append ("+name+")", readEvents(t, ctx, s, "r-2", 0, 100), nil, 0, 0)
	}
	appendEvents(t, ctx, s, "r-1", 4, 4)
}

func testEventsRead(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendEvents(t, ctx, s, "r-1", 1, 10)
	for _, c := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 3, span(1, 3)},
		{3, 3, span(4, 6)},
		{8, 5, span(9, 10)},
		{10, 5, nil},
		{50, 5, nil},
		{0, 10, span(1, 10)},
	} {
		page := readEvents(t, ctx, s, "r-1", c.after, c.limit)
		wantPage(t, fmt.Sprintf("ReadEvents(after %d, limit %d)", c.after, c.limit), page, c.want, 10, 0)
	}
}

func testEventsLimits(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendEvents(t, ctx, s, "r-1", 1, 1001)
	for _, c := range []struct{ limit, want int }{{0, 100}, {1000, 1000}, {5000, 1000}} {
		page := readEvents(t, ctx, s, "r-1", 0, c.limit)
		if len(page.Events) != c.want || page.LastSeq != 1001 {
			t.Errorf("ReadEvents with limit %d: %d events, LastSeq %d; want %d and 1001", c.limit, len(page.Events), page.LastSeq, c.want)
		}
	}
}

func testEventsRuns(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, ctx, s, store.Change{Events: append(runEvents("r-1", 1, 2), runEvents("r-2", 1, 1)...)})
	appendEvents(t, ctx, s, "r-2", 2, 4)
	wantPage(t, "r-1", readEvents(t, ctx, s, "r-1", 0, 100), span(1, 2), 2, 0)
	wantPage(t, "r-2", readEvents(t, ctx, s, "r-2", 0, 100), span(1, 4), 4, 0)
	for _, e := range readEvents(t, ctx, s, "r-2", 0, 100).Events {
		if e.RunID != "r-2" {
			t.Fatalf("ReadEvents(r-2) returned an event of run %q", e.RunID)
		}
	}
}

func testEventsRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	want := runEvents("r-1", 1, 3)
	want[1].Type = "engine.run.r-1.stream.agent.delta"
	want[2].Data = json.RawMessage(`{"nested": {"list": [1, 2.5, "x", null, false]}, "unicode": "héllo ✓"}`)
	apply(t, ctx, s, store.Change{Events: want})
	got := readEvents(t, ctx, s, "r-1", 0, 100).Events
	wantSameJSON(t, "events read back", normEvents(got), normEvents(want))
}

func testEventsTime(t *testing.T, s store.Store) {
	ctx := t.Context()
	evs := runEvents("r-1", 1, 1)
	evs[0].Time = time.Time{}
	before := time.Now()
	apply(t, ctx, s, store.Change{Events: evs})
	after := time.Now()
	wantRecent(t, "Time of an event appended without one", readEvents(t, ctx, s, "r-1", 0, 1).Events[0].Time, before, after)
}

func testEventsPrune(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendEvents(t, ctx, s, "r-1", 1, 10)
	appendEvents(t, ctx, s, "r-2", 1, 3)
	wantNoError(t, s.PruneEvents(ctx, "r-1", 5), "PruneEvents(r-1, 5)")

	wantPage(t, "read after 0 once 1-5 are pruned", readEvents(t, ctx, s, "r-1", 0, 100), span(6, 10), 10, 5)
	wantPage(t, "read after 2 once 1-5 are pruned", readEvents(t, ctx, s, "r-1", 2, 2), span(6, 7), 10, 5)
	wantPage(t, "read after 5 once 1-5 are pruned", readEvents(t, ctx, s, "r-1", 5, 100), span(6, 10), 10, 5)
	wantPage(t, "read after 7 once 1-5 are pruned", readEvents(t, ctx, s, "r-1", 7, 100), span(8, 10), 10, 5)
	wantPage(t, "another run is not pruned", readEvents(t, ctx, s, "r-2", 0, 100), span(1, 3), 3, 0)

	appendEvents(t, ctx, s, "r-1", 11, 12)
	wantPage(t, "append after prune", readEvents(t, ctx, s, "r-1", 0, 100), span(6, 12), 12, 5)
	err := s.Apply(ctx, store.Change{Events: runEvents("r-1", 6, 6)})
	wantClass(t, err, errdefs.ClassConflict, "re-appending seq 6 after a prune")

	wantNoError(t, s.PruneEvents(ctx, "r-1", 12), "PruneEvents(r-1, 12)")
	wantPage(t, "read once everything is pruned", readEvents(t, ctx, s, "r-1", 0, 100), nil, 12, 12)
	appendEvents(t, ctx, s, "r-1", 13, 13)
	wantPage(t, "append after pruning everything", readEvents(t, ctx, s, "r-1", 0, 100), span(13, 13), 13, 12)
}

func testEventsPruneBounds(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendEvents(t, ctx, s, "r-1", 1, 10)
	wantNoError(t, s.PruneEvents(ctx, "r-1", 6), "PruneEvents(r-1, 6)")
	wantNoError(t, s.PruneEvents(ctx, "r-1", 3), "PruneEvents(r-1, 3) after 6")
	wantPage(t, "prune never moves back", readEvents(t, ctx, s, "r-1", 0, 100), span(7, 10), 10, 6)
	wantNoError(t, s.PruneEvents(ctx, "r-1", 0), "PruneEvents(r-1, 0)")
	wantNoError(t, s.PruneEvents(ctx, "r-1", 50), "PruneEvents(r-1, 50) beyond the last seq")
	wantPage(t, "prune beyond the last seq is clamped", readEvents(t, ctx, s, "r-1", 0, 100), nil, 10, 10)
	appendEvents(t, ctx, s, "r-1", 11, 11)
	wantNoError(t, s.PruneEvents(ctx, "r-none", 5), "PruneEvents of an unknown run")
	wantPage(t, "unknown run after a prune", readEvents(t, ctx, s, "r-none", 0, 100), nil, 0, 0)
	appendEvents(t, ctx, s, "r-none", 1, 1)
	wantClass(t, s.PruneEvents(ctx, "r-1", -1), errdefs.ClassValidation, "PruneEvents with a negative seq")
}

func testEventsUnknownRun(t *testing.T, s store.Store) {
	wantPage(t, "unknown run", readEvents(t, t.Context(), s, "r-none", 0, 10), nil, 0, 0)
	wantPage(t, "unknown run after 5", readEvents(t, t.Context(), s, "r-none", 5, 10), nil, 0, 0)
}

func testEventsInvalid(t *testing.T, s store.Store) {
	ctx := t.Context()
	spoil := map[string]func(e *run.Event){
		"missing run id":   func(e *run.Event) { e.RunID = "" },
		"missing type":     func(e *run.Event) { e.Type = "" },
		"missing data":     func(e *run.Event) { e.Data = nil },
		"invalid json":     func(e *run.Event) { e.Data = json.RawMessage(`{"a":`) },
		"trailing garbage": func(e *run.Event) { e.Data = json.RawMessage(`{"a":1} x`) },
	}
	for _, name := range sortedKeys(spoil) {
		evs := runEvents("r-1", 1, 1)
		spoil[name](&evs[0])
		wantClass(t, s.Apply(ctx, store.Change{Events: evs}), errdefs.ClassValidation, "appending an event with "+name)
	}
	// EventsValid spares the data scan only: what is missing is still refused.
	for _, name := range []string{"missing run id", "missing type", "missing data"} {
		evs := runEvents("r-1", 1, 1)
		spoil[name](&evs[0])
		wantClass(t, s.Apply(ctx, store.Change{Events: evs, EventsValid: true}), errdefs.ClassValidation, "appending an event promised valid with "+name)
	}
	wantPage(t, "run after rejected appends", readEvents(t, ctx, s, "r-1", 0, 10), nil, 0, 0)
	evs := runEvents("r-1", 1, 2)
	if err := s.Apply(ctx, store.Change{Events: evs, EventsValid: true}); err != nil {
		t.Fatalf("appending events promised valid: %v", err)
	}
	wantPage(t, "run after an append promised valid", readEvents(t, ctx, s, "r-1", 0, 10), []int64{1, 2}, 2, 0)
	_, err := s.ReadEvents(ctx, "r-1", -1, 10)
	wantClass(t, err, errdefs.ClassValidation, "ReadEvents with a negative after")
	_, err = s.ReadEvents(ctx, "r-1", 0, -1)
	wantClass(t, err, errdefs.ClassValidation, "ReadEvents with a negative limit")
}
