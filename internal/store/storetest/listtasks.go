package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testListTasks(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"NewestFirstTiesByIDDescending": testListOrder,
		"Filters":                       testListFilters,
		"UpdatedAfter":                  testListUpdatedAfter,
		"CursorPaging":                  testListPaging,
		"PagingStableWhileInserting":    testListPagingStable,
		"LimitDefaultAndClamp":          testListLimits,
		"InvalidQueries":                testListInvalid,
		"EmptyStore":                    testListEmpty,
	})
}

// listIDs lists q and returns the page's task ids.
func listIDs(t *testing.T, ctx context.Context, s store.Store, q run.TaskQuery) ([]string, run.TaskPage) {
	t.Helper()
	page, err := s.ListTasks(ctx, q)
	wantNoError(t, err, fmt.Sprintf("ListTasks(%+v)", q))
	return ids(page.Tasks), page
}

func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func testListOrder(t *testing.T, s store.Store) {
	ctx := t.Context()
	// Created out of order; t-b and t-a share a creation time.
	for _, task := range []*run.Task{newTask("t-b", "c-1", 5), newTask("t-old", "c-1", 1), newTask("t-new", "c-1", 9), newTask("t-a", "c-1", 5)} {
		createTask(t, ctx, s, task)
	}
	got, page := listIDs(t, ctx, s, run.TaskQuery{})
	wantIDs(t, "ListTasks order (CreatedAt desc, then ID desc)", got, []string{"t-new", "t-b", "t-a", "t-old"})
	if page.NextCursor != "" {
		t.Errorf("NextCursor of a complete listing = %q, want empty", page.NextCursor)
	}
	if page.Total != 4 {
		t.Errorf("Total = %d, want 4", page.Total)
	}
	wantIDs(t, "walking the tie with Limit 1", walkIDs(t, ctx, s, run.TaskQuery{Limit: 1}), got)
}

// walkIDs follows the cursors of q to the end and returns every id seen.
func walkIDs(t *testing.T, ctx context.Context, s store.Store, q run.TaskQuery) []string {
	t.Helper()
	var all []string
	for range 1000 {
		got, page := listIDs(t, ctx, s, q)
		all = append(all, got...)
		if page.NextCursor == "" {
			return all
		}
		if len(got) == 0 {
			t.Fatalf("ListTasks returned an empty page with NextCursor %q; a page before the last must hold tasks", page.NextCursor)
		}
		q.Cursor = page.NextCursor
	}
	t.Fatalf("ListTasks(%+v) did not reach the last page after 1000 pages", q)
	return nil
}

func testListFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	mk := func(id, contextID, agent string, state run.TaskState, created int) {
		task := newTask(id, contextID, created)
		task.AgentID, task.State = agent, state
		createTask(t, ctx, s, task)
	}
	mk("t-1", "c-1", "alpha", run.StateSubmitted, 1)
	mk("t-2", "c-1", "beta", run.StateWorking, 2)
	mk("t-3", "c-2", "alpha", run.StateCompleted, 3)
	mk("t-4", "c-2", "beta", run.StateInputRequired, 4)
	mk("t-5", "c-1", "alpha", run.StateCompleted, 5)

	cases := []struct {
		name string
		q    run.TaskQuery
		want []string
	}{
		{"no filter", run.TaskQuery{}, []string{"t-5", "t-4", "t-3", "t-2", "t-1"}},
		{"context", run.TaskQuery{ContextID: "c-1"}, []string{"t-5", "t-2", "t-1"}},
		{"agent", run.TaskQuery{AgentID: "beta"}, []string{"t-4", "t-2"}},
		{"one state", run.TaskQuery{States: []run.TaskState{run.StateCompleted}}, []string{"t-5", "t-3"}},
		{"several states", run.TaskQuery{States: []run.TaskState{run.StateWorking, run.StateInputRequired}}, []string{"t-4", "t-2"}},
		{"context and agent and state", run.TaskQuery{ContextID: "c-1", AgentID: "alpha", States: []run.TaskState{run.StateCompleted}}, []string{"t-5"}},
		{"unknown context", run.TaskQuery{ContextID: "c-9"}, nil},
		{"context paged", run.TaskQuery{ContextID: "c-1", Limit: 2}, []string{"t-5", "t-2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, page := listIDs(t, ctx, s, c.q)
			wantIDs(t, c.name, got, c.want)
			wantTotal := len(c.want)
			if c.name == "context paged" {
				wantTotal = 3
				wantIDs(t, "second page of context c-1", walkIDs(t, ctx, s, run.TaskQuery{ContextID: "c-1", Limit: 2, Cursor: page.NextCursor}), []string{"t-1"})
			}
			if page.Total != wantTotal {
				t.Errorf("Total for %s = %d, want %d", c.name, page.Total, wantTotal)
			}
		})
	}
}

func testListUpdatedAfter(t *testing.T, s store.Store) {
	ctx := t.Context()
	var mark time.Time
	for i, id := range []string{"t-1", "t-2", "t-3"} {
		got := createTask(t, ctx, s, newTask(id, "c-1", i))
		if got.UpdatedAt.After(mark) {
			mark = got.UpdatedAt
		}
	}
	// Update t-2 until the store's clock has moved past mark.
	eventually(t, "an update of t-2 stamped after every create", func() bool {
		task := getTask(t, ctx, s, "t-2")
		task.State = run.StateWorking
		apply(t, ctx, s, store.Change{TaskID: task.ID, UpdateTask: &task})
		return getTask(t, ctx, s, "t-2").UpdatedAt.After(mark)
	})
	got, page := listIDs(t, ctx, s, run.TaskQuery{UpdatedAfter: mark})
	wantIDs(t, "UpdatedAfter the newest create", got, []string{"t-2"})
	if page.Total != 1 {
		t.Errorf("Total with UpdatedAfter = %d, want 1", page.Total)
	}
	got, _ = listIDs(t, ctx, s, run.TaskQuery{UpdatedAfter: mark.Add(-time.Hour)})
	wantIDs(t, "UpdatedAfter an hour earlier", got, []string{"t-3", "t-2", "t-1"})
	got, _ = listIDs(t, ctx, s, run.TaskQuery{UpdatedAfter: getTask(t, ctx, s, "t-2").UpdatedAt})
	wantIDs(t, "UpdatedAfter exactly the newest update (strictly after)", got, nil)
}

func testListPaging(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i := 1; i <= 5; i++ {
		createTask(t, ctx, s, newTask(fmt.Sprintf("t-%d", i), "c-1", i))
	}
	var pages [][]string
	q := run.TaskQuery{Limit: 2}
	for {
		got, page := listIDs(t, ctx, s, q)
		pages = append(pages, got)
		if page.Total != 5 {
			t.Errorf("Total on page %d = %d, want 5 (every match, all pages)", len(pages), page.Total)
		}
		if page.NextCursor == "" {
			break
		}
		if len(pages) > 5 {
			t.Fatalf("paging 5 tasks by 2 did not end after 5 pages: %q", pages)
		}
		q.Cursor = page.NextCursor
	}
	want := [][]string{{"t-5", "t-4"}, {"t-3", "t-2"}, {"t-1"}}
	if fmt.Sprint(pages) != fmt.Sprint(want) {
		t.Fatalf("pages of 2 = %q, want %q (NextCursor empty only on the last page)", pages, want)
	}
	// A page that ends exactly at the last match is the last page.
	got, page := listIDs(t, ctx, s, run.TaskQuery{Limit: 5})
	wantIDs(t, "listing 5 tasks with Limit 5", got, []string{"t-5", "t-4", "t-3", "t-2", "t-1"})
	if page.NextCursor != "" {
		t.Errorf("NextCursor of a page that holds the last match = %q, want empty", page.NextCursor)
	}
}

func testListPagingStable(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i := 1; i <= 5; i++ {
		createTask(t, ctx, s, newTask(fmt.Sprintf("t-%d", i), "c-1", 10*i))
	}
	first, page := listIDs(t, ctx, s, run.TaskQuery{Limit: 2})
	wantIDs(t, "first page", first, []string{"t-5", "t-4"})
	// A newer task and one older than every listed task arrive mid-listing.
	createTask(t, ctx, s, newTask("t-newest", "c-1", 100))
	createTask(t, ctx, s, newTask("t-oldest", "c-1", 0))
	rest := walkIDs(t, ctx, s, run.TaskQuery{Limit: 2, Cursor: page.NextCursor})
	wantIDs(t, "pages after the cursor while tasks are inserted", rest, []string{"t-3", "t-2", "t-1", "t-oldest"})
	_, page = listIDs(t, ctx, s, run.TaskQuery{Limit: 2, Cursor: page.NextCursor})
	if page.Total != 7 {
		t.Errorf("Total after inserting 2 tasks = %d, want 7", page.Total)
	}
}

func testListLimits(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i := 1; i <= 101; i++ {
		createTask(t, ctx, s, newTask(fmt.Sprintf("t-%03d", i), "c-1", i))
	}
	for _, c := range []struct {
		limit, want int
	}{{0, 50}, {100, 100}, {101, 100}, {1000, 100}, {3, 3}} {
		got, page := listIDs(t, ctx, s, run.TaskQuery{Limit: c.limit})
		if len(got) != c.want {
			t.Errorf("ListTasks with Limit %d returned %d tasks, want %d", c.limit, len(got), c.want)
		}
		if page.NextCursor == "" {
			t.Errorf("ListTasks with Limit %d: NextCursor empty, want a cursor (101 tasks match)", c.limit)
		}
		if page.Total != 101 {
			t.Errorf("ListTasks with Limit %d: Total = %d, want 101", c.limit, page.Total)
		}
	}
	if got := walkIDs(t, ctx, s, run.TaskQuery{Limit: 1000}); len(got) != 101 || got[0] != "t-101" || got[100] != "t-001" {
		t.Errorf("walking 101 tasks by 100 saw %d tasks from %v, want 101 from t-101 to t-001", len(got), got[:min(len(got), 1)])
	}
}

func testListInvalid(t *testing.T, s store.Store) {
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	for _, c := range []struct {
		name string
		q    run.TaskQuery
	}{
		{"garbage cursor", run.TaskQuery{Cursor: "%%% not a cursor %%%"}},
		{"negative limit", run.TaskQuery{Limit: -1}},
		{"unknown state", run.TaskQuery{States: []run.TaskState{"sleeping"}}},
	} {
		_, err := s.ListTasks(ctx, c.q)
		wantClass(t, err, errdefs.ClassValidation, "ListTasks with a "+c.name)
	}
}

func testListEmpty(t *testing.T, s store.Store) {
	got, page := listIDs(t, t.Context(), s, run.TaskQuery{})
	wantIDs(t, "ListTasks of an empty store", got, nil)
	if page.NextCursor != "" || page.Total != 0 {
		t.Errorf("empty listing: NextCursor %q, Total %d; want empty and 0", page.NextCursor, page.Total)
	}
}
