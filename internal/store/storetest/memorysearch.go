package storetest

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

func search(t *testing.T, s store.Memory, ctx context.Context, q store.MemoryQuery) []run.MemoryItem {
	t.Helper()
	page, err := s.SearchMemory(ctx, q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return page
}

// memorySearchList: without a query, the items under the prefix that
// contain the filter, most recently updated first, paged.
func memorySearchList(t *testing.T, s store.Memory) {
	ctx := context.Background()
	putItem(t, s, ctx, []string{"users", "ann"}, "a", map[string]any{"kind": "fact", "tags": []any{"x", "y"}, "n": float64(2)}, "", nil)
	waitPastNow()
	putItem(t, s, ctx, []string{"users", "ann", "notes"}, "b", map[string]any{"kind": "note"}, "", nil)
	waitPastNow()
	putItem(t, s, ctx, []string{"users", "bob"}, "c", map[string]any{"kind": "fact", "nested": map[string]any{"a": "1", "b": "2"}}, "", nil)
	waitPastNow()
	putItem(t, s, ctx, []string{"usersx"}, "d", map[string]any{"kind": "fact"}, "", nil)
	tests := []struct {
		name string
		q    run.MemorySearch
		want []string
	}{
		{"all, newest first", run.MemorySearch{}, []string{"d", "c", "b", "a"}},
		{"prefix is by label, not by text", run.MemorySearch{Prefix: []string{"users"}}, []string{"c", "b", "a"}},
		{"deeper prefix", run.MemorySearch{Prefix: []string{"users", "ann"}}, []string{"b", "a"}},
		{"filter scalar", run.MemorySearch{Prefix: []string{"users"}, Filter: map[string]any{"kind": "fact"}}, []string{"c", "a"}},
		{"filter number", run.MemorySearch{Filter: map[string]any{"n": float64(2)}}, []string{"a"}},
		{"filter array element", run.MemorySearch{Filter: map[string]any{"tags": []any{"y"}}}, []string{"a"}},
		{"filter nested object", run.MemorySearch{Filter: map[string]any{"nested": map[string]any{"b": "2"}}}, []string{"c"}},
		{"filter no match", run.MemorySearch{Filter: map[string]any{"kind": "other"}}, []string{}},
		{"limit", run.MemorySearch{Limit: 2}, []string{"d", "c"}},
		{"offset", run.MemorySearch{Offset: 2, Limit: 1}, []string{"b"}},
		{"offset past the end", run.MemorySearch{Offset: 9}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := search(t, s, ctx, store.MemoryQuery{MemorySearch: tt.q})
			if got := itemKeys(page); !slices.Equal(got, tt.want) {
				t.Fatalf("keys = %v, want %v", got, tt.want)
			}
			for _, it := range page {
				if it.Score != nil {
					t.Fatalf("item %s has a score without a query", it.Key)
				}
			}
		})
	}
}

func waitPastNow() { waitPast(store.StoredTime(time.Now())) }

// memorySearchText: a text query finds the items whose text holds its
// words, the best match first, and nothing else.
func memorySearchText(t *testing.T, s store.Memory) {
	ctx, ns := context.Background(), []string{"m"}
	putItem(t, s, ctx, ns, "colour", map[string]any{}, "Ann's favourite colour is blue", nil)
	putItem(t, s, ctx, ns, "city", map[string]any{}, "Ann lives in Lisbon", nil)
	putItem(t, s, ctx, ns, "both", map[string]any{}, "Ann paints Lisbon in her favourite colour", nil)
	putItem(t, s, ctx, ns, "silent", map[string]any{}, "", nil)
	page := search(t, s, ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Query: "favourite colour Lisbon"}})
	if got := itemKeys(page); !slices.Equal(got, []string{"both", "colour", "city"}) {
		t.Fatalf("keys = %v, want both, colour, city", got)
	}
	for i, it := range page {
		if it.Score == nil || *it.Score <= 0 || i > 0 && *it.Score > *page[i-1].Score {
			t.Fatalf("scores not positive and descending: item %d %+v", i, it)
		}
	}
	if page := search(t, s, ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Query: "penguins"}}); len(page) != 0 {
		t.Fatalf("an unrelated query found %v", itemKeys(page))
	}
}

// memorySearchVector: a vector query ranks the items holding a vector of
// its length by cosine similarity; others are left out.
func memorySearchVector(t *testing.T, s store.Memory) {
	ctx, ns := context.Background(), []string{"v"}
	putItem(t, s, ctx, ns, "east", map[string]any{}, "", unit(1, 0, 0))
	putItem(t, s, ctx, ns, "north", map[string]any{}, "", unit(0, 1, 0))
	putItem(t, s, ctx, ns, "northeast", map[string]any{}, "", unit(1, 1, 0))
	putItem(t, s, ctx, ns, "flat", map[string]any{}, "", unit(1, 0))
	putItem(t, s, ctx, ns, "none", map[string]any{}, "", nil)
	page := search(t, s, ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: ns}, Vector: unit(1, 0.2, 0)})
	if got := itemKeys(page); !slices.Equal(got, []string{"east", "northeast", "north"}) {
		t.Fatalf("keys = %v, want east, northeast, north", got)
	}
	want := []float64{1 / math.Sqrt(1.04), 1.2 / math.Sqrt(2) / math.Sqrt(1.04), 0.2 / math.Sqrt(1.04)}
	for i, it := range page {
		if it.Score == nil || math.Abs(*it.Score-want[i]) > 1e-5 {
			t.Fatalf("%s: score %v, want %.6f", it.Key, it.Score, want[i])
		}
	}
	page = search(t, s, ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Offset: 1, Limit: 1}, Vector: unit(0, 1, 0)})
	if got := itemKeys(page); !slices.Equal(got, []string{"northeast"}) {
		t.Fatalf("second of the nearest to north = %v, want northeast", got)
	}
}

// unit returns v scaled to unit length.
func unit(v ...float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(n))
	}
	return out
}

func memoryNamespaces(t *testing.T, s store.Memory) {
	ctx := context.Background()
	for _, ns := range [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"a", "x"}, {"b", "x"}, {"a", "b", "c"}} {
		putItem(t, s, ctx, ns, "k"+ns[len(ns)-1], map[string]any{}, "", nil)
	}
	tests := []struct {
		name string
		q    run.NamespaceQuery
		want [][]string
	}{
		{"all", run.NamespaceQuery{}, [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"a", "x"}, {"b", "x"}}},
		{"prefix", run.NamespaceQuery{Prefix: []string{"a", "b"}}, [][]string{{"a", "b", "c"}, {"a", "b", "d"}}},
		{"suffix", run.NamespaceQuery{Suffix: []string{"x"}}, [][]string{{"a", "x"}, {"b", "x"}}},
		{"max depth", run.NamespaceQuery{MaxDepth: 2}, [][]string{{"a", "b"}, {"a", "x"}, {"b", "x"}}},
		{"paged", run.NamespaceQuery{Offset: 1, Limit: 2}, [][]string{{"a", "b", "d"}, {"a", "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ListMemoryNamespaces(ctx, tt.q)
			if err != nil || !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Fatalf("namespaces = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// memoryTenancy: another tenant neither reads, finds, lists nor deletes
// an item, and its own item under the same name is its own.
func memoryTenancy(t *testing.T, s store.Memory) {
	ctx, other := context.Background(), run.WithTenant(context.Background(), "other")
	ns := []string{"shared", "name"}
	putItem(t, s, ctx, ns, "k", map[string]any{"owner": "default"}, "secret words", unit(1, 0))
	if _, err := s.GetMemory(other, ns, "k", true); !errdefs.IsNotFound(err) {
		t.Fatalf("get from another tenant: %v, want NotFound", err)
	}
	if err := s.DeleteMemory(other, ns, "k"); !errdefs.IsNotFound(err) {
		t.Fatalf("delete from another tenant: %v, want NotFound", err)
	}
	for _, q := range []store.MemoryQuery{{}, {MemorySearch: run.MemorySearch{Query: "secret"}}, {Vector: unit(1, 0)}} {
		if page := search(t, s, other, q); len(page) != 0 {
			t.Fatalf("another tenant's search %+v found %v", q, itemKeys(page))
		}
	}
	if nss, err := s.ListMemoryNamespaces(other, run.NamespaceQuery{}); err != nil || len(nss) != 0 {
		t.Fatalf("another tenant lists %v, %v", nss, err)
	}
	putItem(t, s, other, ns, "k", map[string]any{"owner": "other"}, "", nil)
	if got, err := s.GetMemory(ctx, ns, "k", false); err != nil || got.Value["owner"] != "default" {
		t.Fatalf("the first tenant's item = %+v, %v", got, err)
	}
}
