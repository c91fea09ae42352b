package storetest

import (
	"context"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// RunThreadsSuite is the contract of store.Threads: create, get, merge
// metadata, delete, search by ids and metadata with offset paging, and
// tenancy (another tenant's thread is not found).
func RunThreadsSuite(t *testing.T, newStore func(t *testing.T) store.Threads) {
	t.Run("CreateGetConflict", func(t *testing.T) {
		s, ctx := newStore(t), context.Background()
		th, err := s.CreateThread(ctx, run.Thread{ID: "t1", Metadata: map[string]any{"user": "ann"}})
		if err != nil || th.ID != "t1" || th.Metadata["user"] != "ann" || th.CreatedAt.IsZero() {
			t.Fatalf("create = %+v, %v", th, err)
		}
		if _, err := s.CreateThread(ctx, run.Thread{ID: "t1"}); !errdefs.IsConflict(err) {
			t.Fatalf("second create: %v, want Conflict", err)
		}
		got, err := s.GetThread(ctx, "t1")
		if err != nil || got.Metadata["user"] != "ann" || !got.CreatedAt.Equal(th.CreatedAt) {
			t.Fatalf("get = %+v, %v", got, err)
		}
		if _, err := s.GetThread(run.WithTenant(ctx, "other"), "t1"); !errdefs.IsNotFound(err) {
			t.Fatalf("get from another tenant: %v, want NotFound", err)
		}
	})
	t.Run("UpdateMergesAndDrops", func(t *testing.T) {
		s, ctx := newStore(t), context.Background()
		mustCreateThread(t, s, ctx, "t1", map[string]any{"a": "1", "b": "2"})
		th, err := s.UpdateThreadMetadata(ctx, "t1", map[string]any{"b": nil, "c": float64(3)})
		if err != nil || th.Metadata["a"] != "1" || th.Metadata["c"] != float64(3) || th.Metadata["b"] != nil {
			t.Fatalf("update = %+v, %v", th, err)
		}
		if _, err := s.UpdateThreadMetadata(run.WithTenant(ctx, "other"), "t1", map[string]any{"x": 1}); !errdefs.IsNotFound(err) {
			t.Fatalf("update from another tenant: %v, want NotFound", err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		s, ctx := newStore(t), context.Background()
		mustCreateThread(t, s, ctx, "t1", nil)
		if err := s.DeleteThread(run.WithTenant(ctx, "other"), "t1"); !errdefs.IsNotFound(err) {
			t.Fatalf("delete from another tenant: %v, want NotFound", err)
		}
		if err := s.DeleteThread(ctx, "t1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetThread(ctx, "t1"); !errdefs.IsNotFound(err) {
			t.Fatalf("get after delete: %v, want NotFound", err)
		}
	})
	t.Run("Search", func(t *testing.T) { threadSearch(t, newStore(t)) })
}

func mustCreateThread(t *testing.T, s store.Threads, ctx context.Context, id string, meta map[string]any) {
	t.Helper()
	if _, err := s.CreateThread(ctx, run.Thread{ID: id, Metadata: meta}); err != nil {
		t.Fatal(err)
	}
}

func threadIDs(ts []run.Thread) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// threadSearch: by metadata, by ids, paged with offset, the total counted
// past the last page, another tenant's threads left out.
func threadSearch(t *testing.T, s store.Threads) {
	ctx := context.Background()
	mustCreateThread(t, s, ctx, "t1", map[string]any{"team": "red", "n": float64(1)})
	mustCreateThread(t, s, ctx, "t2", map[string]any{"team": "blue"})
	mustCreateThread(t, s, ctx, "t3", map[string]any{"team": "red", "n": float64(3)})
	mustCreateThread(t, s, run.WithTenant(ctx, "other"), "t4", map[string]any{"team": "red"})
	page, total, err := s.SearchThreads(ctx, run.ThreadQuery{Metadata: map[string]any{"team": "red"}})
	if err != nil || total != 2 || len(page) != 2 || page[0].ID != "t3" || page[1].ID != "t1" {
		t.Fatalf("search red = %v, %d, %v", threadIDs(page), total, err)
	}
	page, total, err = s.SearchThreads(ctx, run.ThreadQuery{Limit: 1, Offset: 1})
	if err != nil || total != 3 || len(page) != 1 || page[0].ID != "t2" {
		t.Fatalf("search page 2 = %v, %d, %v", threadIDs(page), total, err)
	}
	page, total, err = s.SearchThreads(ctx, run.ThreadQuery{IDs: []string{"t1", "t2", "t4"}})
	if err != nil || total != 2 || len(page) != 2 {
		t.Fatalf("search ids = %v, %d, %v", threadIDs(page), total, err)
	}
	_, total, err = s.SearchThreads(ctx, run.ThreadQuery{Offset: 10})
	if err != nil || total != 3 {
		t.Fatalf("search past the end: total %d, %v", total, err)
	}
}
