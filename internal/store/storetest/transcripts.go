package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testTranscripts(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"PositionsDenseAcrossApplies": testPositions,
		"ContextsAreIndependent":      testContextsIndependent,
		"RoundTripsEveryPartKind":     testMessageRoundTrip,
		"TaskIDDefaultsToChange":      testMessageTaskID,
		"CreatedAtDefaultsToNow":      testMessageCreatedAt,
		"TaskFilter":                  testMessageTaskFilter,
		"AfterPaging":                 testMessagePaging,
		"Last":                        testMessageLast,
		"LimitDefaultAndClamp":        testMessageLimits,
		"UnknownContextIsEmpty":       testMessageUnknownContext,
		"InvalidQueries":              testMessageInvalid,
	})
}

func listMessages(t *testing.T, ctx context.Context, s store.Store, q run.MessageQuery) run.MessagePage {
	t.Helper()
	page, err := s.ListMessages(ctx, q)
	wantNoError(t, err, fmt.Sprintf("ListMessages(%+v)", q))
	return page
}

func wantPositions(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%s: got positions %v, want %v", what, got, want)
	}
}

// appendMessages appends n messages named prefix-1…n to contextID for task
// taskID, in batches of batch per Apply.
func appendMessages(t *testing.T, ctx context.Context, s store.Store, contextID, taskID, prefix string, n, batch int) {
	t.Helper()
	msgs := textMessages(contextID, prefix, n)
	for chunk := range slices.Chunk(msgs, batch) {
		apply(t, ctx, s, store.Change{TaskID: taskID, Messages: chunk})
	}
}

func testPositions(t *testing.T, s store.Store) {
	ctx := t.Context()
	msgs := textMessages("c-1", "m", 6)
	msgs[0].Position = 42 // ignored: the store assigns positions
	apply(t, ctx, s, store.Change{Messages: msgs[:1]})
	apply(t, ctx, s, store.Change{Messages: msgs[1:4]})
	apply(t, ctx, s, store.Change{Messages: msgs[4:]})
	page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1"})
	wantPositions(t, "positions after Applies of 1, 3 and 2 messages", positions(page.Messages), span(1, 6))
	for i, m := range page.Messages {
		if m.ID != msgs[i].ID {
			t.Errorf("message at position %d is %q, want %q (append order)", m.Position, m.ID, msgs[i].ID)
		}
	}
	if page.NextAfter != 0 {
		t.Errorf("NextAfter of a complete transcript = %d, want 0", page.NextAfter)
	}
}

func testContextsIndependent(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, ctx, s, store.Change{Messages: []run.Message{
		textMessage("c-1", "a", "a"), textMessage("c-2", "b", "b"), textMessage("c-1", "c", "c"),
	}})
	wantPositions(t, "context c-1", positions(listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1"}).Messages), []int64{1, 2})
	wantPositions(t, "context c-2", positions(listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-2"}).Messages), []int64{1})
}

func testMessageRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	want := run.Message{ContextID: "c-1", TaskID: "t-1", Message: richMessage("m-rich")}
	plain := textMessage("c-1", "", "no id, no metadata")
	plain.Role = model.RoleTool
	apply(t, ctx, s, store.Change{Messages: []run.Message{want, plain}})
	page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1"})
	want.Position = 1
	plain.Position = 2
	wantSameJSON(t, "messages read back", normMessages(page.Messages), normMessages([]run.Message{want, plain}))
}

func testMessageTaskID(t *testing.T, s store.Store) {
	ctx := t.Context()
	own := textMessage("c-1", "m-own", "own")
	own.TaskID = "t-own"
	apply(t, ctx, s, store.Change{TaskID: "t-change", Messages: []run.Message{textMessage("c-1", "m-1", "x"), own}})
	page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1"})
	got := []string{page.Messages[0].TaskID, page.Messages[1].TaskID}
	if !slices.Equal(got, []string{"t-change", "t-own"}) {
		t.Errorf("task ids of the messages = %q, want [t-change t-own] (empty defaults to Change.TaskID)", got)
	}
}

func testMessageCreatedAt(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := textMessage("c-1", "m-1", "x")
	m.CreatedAt = time.Time{}
	before := time.Now()
	apply(t, ctx, s, store.Change{Messages: []run.Message{m}})
	after := time.Now()
	page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1"})
	wantRecent(t, "CreatedAt of a message appended without one", page.Messages[0].CreatedAt, before, after)
}

func testMessageTaskFilter(t *testing.T, s store.Store) {
	ctx := t.Context()
	// Positions 1-2 t-a, 3 t-b, 4-5 t-a, 6 t-b.
	appendMessages(t, ctx, s, "c-1", "t-a", "a1", 2, 2)
	appendMessages(t, ctx, s, "c-1", "t-b", "b1", 1, 1)
	appendMessages(t, ctx, s, "c-1", "t-a", "a2", 2, 2)
	appendMessages(t, ctx, s, "c-1", "t-b", "b2", 1, 1)
	for _, c := range []struct {
		q    run.MessageQuery
		want []int64
		next int64
	}{
		{run.MessageQuery{TaskID: "t-a"}, []int64{1, 2, 4, 5}, 0},
		{run.MessageQuery{TaskID: "t-b"}, []int64{3, 6}, 0},
		{run.MessageQuery{TaskID: "t-a", Limit: 3}, []int64{1, 2, 4}, 4},
		{run.MessageQuery{TaskID: "t-a", After: 4}, []int64{5}, 0},
		{run.MessageQuery{TaskID: "t-a", Last: 3}, []int64{2, 4, 5}, 0},
		{run.MessageQuery{TaskID: "t-none"}, nil, 0},
	} {
		c.q.ContextID = "c-1"
		page := listMessages(t, ctx, s, c.q)
		wantPositions(t, fmt.Sprintf("ListMessages(%+v)", c.q), positions(page.Messages), c.want)
		if page.NextAfter != c.next {
			t.Errorf("ListMessages(%+v).NextAfter = %d, want %d", c.q, page.NextAfter, c.next)
		}
	}
}

func testMessagePaging(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendMessages(t, ctx, s, "c-1", "t-1", "m", 9, 4)
	var got [][]int64
	q := run.MessageQuery{ContextID: "c-1", Limit: 3}
	for range 10 {
		page := listMessages(t, ctx, s, q)
		got = append(got, positions(page.Messages))
		if page.NextAfter == 0 {
			break
		}
		q.After = page.NextAfter
	}
	want := [][]int64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages of 3 of a 9-message transcript = %v, want %v (NextAfter 0 on the page holding the last message)", got, want)
	}
	page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1", After: 9})
	wantPositions(t, "After the last position", positions(page.Messages), nil)
}

func testMessageLast(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendMessages(t, ctx, s, "c-1", "t-1", "m", 10, 10)
	for _, c := range []struct {
		q    run.MessageQuery
		want []int64
	}{
		{run.MessageQuery{Last: 3}, []int64{8, 9, 10}},
		{run.MessageQuery{Last: 3, Limit: 1}, []int64{8, 9, 10}},
		{run.MessageQuery{Last: 4, After: 3}, []int64{7, 8, 9, 10}},
		{run.MessageQuery{Last: 20, After: 7}, []int64{8, 9, 10}},
		{run.MessageQuery{Last: 20}, span(1, 10)},
	} {
		c.q.ContextID = "c-1"
		page := listMessages(t, ctx, s, c.q)
		wantPositions(t, fmt.Sprintf("ListMessages(%+v)", c.q), positions(page.Messages), c.want)
		if page.NextAfter != 0 {
			t.Errorf("ListMessages(%+v).NextAfter = %d, want 0 (Last returns the end of the transcript)", c.q, page.NextAfter)
		}
	}
}

func testMessageLimits(t *testing.T, s store.Store) {
	ctx := t.Context()
	appendMessages(t, ctx, s, "c-1", "t-1", "m", 1001, 1001)
	for _, c := range []struct {
		limit int
		want  int
		next  int64
	}{{0, 100, 100}, {1000, 1000, 1000}, {5000, 1000, 1000}, {1001, 1000, 1000}} {
		page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-1", Limit: c.limit})
		if len(page.Messages) != c.want || page.NextAfter != c.next {
			t.Errorf("ListMessages with Limit %d: %d messages, NextAfter %d; want %d and %d", c.limit, len(page.Messages), page.NextAfter, c.want, c.next)
		}
	}
}

func testMessageUnknownContext(t *testing.T, s store.Store) {
	page := listMessages(t, t.Context(), s, run.MessageQuery{ContextID: "c-none"})
	if len(page.Messages) != 0 || page.NextAfter != 0 {
		t.Errorf("transcript of an unknown context: %d messages, NextAfter %d; want none and 0", len(page.Messages), page.NextAfter)
	}
}

func testMessageInvalid(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name string
		q    run.MessageQuery
	}{
		{"missing context", run.MessageQuery{}},
		{"negative after", run.MessageQuery{ContextID: "c-1", After: -1}},
		{"negative last", run.MessageQuery{ContextID: "c-1", Last: -1}},
		{"negative limit", run.MessageQuery{ContextID: "c-1", Limit: -1}},
	} {
		_, err := s.ListMessages(t.Context(), c.q)
		wantClass(t, err, errdefs.ClassValidation, "ListMessages with "+c.name)
	}
}
