package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// RunMemorySuite is the contract of store.Memory: upserts that keep
// created_at, gets and deletes, expiry and TTL refresh, search by prefix,
// filter, text and vector with offset paging, namespace listing, and
// tenancy (another tenant's items are never seen).
func RunMemorySuite(t *testing.T, newStore func(t *testing.T) store.Memory) {
	t.Run("PutGetUpsert", func(t *testing.T) { memoryUpsert(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { memoryDelete(t, newStore(t)) })
	t.Run("Expiry", func(t *testing.T) { memoryExpiry(t, newStore(t)) })
	t.Run("Refresh", func(t *testing.T) { memoryRefresh(t, newStore(t)) })
	t.Run("SearchPrefixFilterPage", func(t *testing.T) { memorySearchList(t, newStore(t)) })
	t.Run("SearchText", func(t *testing.T) { memorySearchText(t, newStore(t)) })
	t.Run("SearchVector", func(t *testing.T) { memorySearchVector(t, newStore(t)) })
	t.Run("Namespaces", func(t *testing.T) { memoryNamespaces(t, newStore(t)) })
	t.Run("Tenancy", func(t *testing.T) { memoryTenancy(t, newStore(t)) })
}

func putItem(t *testing.T, s store.Memory, ctx context.Context, ns []string, key string, value map[string]any, text string, vec []float32) run.MemoryItem {
	t.Helper()
	it, err := s.PutMemory(ctx, store.MemoryRecord{Item: run.MemoryItem{Namespace: ns, Key: key, Value: value}, Text: text, Vector: vec})
	if err != nil {
		t.Fatalf("put %v/%s: %v", ns, key, err)
	}
	return it
}

func itemKeys(items []run.MemoryItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.Key)
	}
	return out
}

func memoryUpsert(t *testing.T, s store.Memory) {
	ctx, ns := context.Background(), []string{"memories", "ann"}
	first := putItem(t, s, ctx, ns, "colour", map[string]any{"fact": "blue", "n": float64(1)}, "", nil)
	if !slices.Equal(first.Namespace, ns) || first.Key != "colour" || first.Value["fact"] != "blue" ||
		first.CreatedAt.IsZero() || !first.CreatedAt.Equal(first.UpdatedAt) || !first.ExpiresAt.IsZero() {
		t.Fatalf("put = %+v", first)
	}
	second := putItem(t, s, ctx, ns, "colour", map[string]any{"fact": "green"}, "", nil)
	if !second.CreatedAt.Equal(first.CreatedAt) || second.UpdatedAt.Before(first.UpdatedAt) || second.Value["n"] != nil {
		t.Fatalf("second put = %+v, want created_at kept, the value replaced whole", second)
	}
	got, err := s.GetMemory(ctx, ns, "colour", false)
	if err != nil || got.Value["fact"] != "green" || !got.CreatedAt.Equal(first.CreatedAt) || !got.UpdatedAt.Equal(second.UpdatedAt) {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := s.GetMemory(ctx, []string{"memories"}, "colour", false); !errdefs.IsNotFound(err) {
		t.Fatalf("get under the parent namespace: %v, want NotFound", err)
	}
}

func memoryDelete(t *testing.T, s store.Memory) {
	ctx, ns := context.Background(), []string{"a"}
	putItem(t, s, ctx, ns, "k", map[string]any{"x": "y"}, "", nil)
	if err := s.DeleteMemory(ctx, ns, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetMemory(ctx, ns, "k", false); !errdefs.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
	if err := s.DeleteMemory(ctx, ns, "k"); !errdefs.IsNotFound(err) {
		t.Fatalf("second delete: %v, want NotFound", err)
	}
}

// memoryExpiry: an item past its TTL is invisible to every read; a new put
// of it starts afresh (a new created_at).
func memoryExpiry(t *testing.T, s store.Memory) {
	ctx, ns := context.Background(), []string{"short"}
	it, err := s.PutMemory(ctx, store.MemoryRecord{Item: run.MemoryItem{Namespace: ns, Key: "k", Value: map[string]any{"v": "1"}, TTL: 20 * time.Millisecond}, Text: "brief"})
	if err != nil || it.TTL != 20*time.Millisecond || !it.ExpiresAt.Equal(it.UpdatedAt.Add(20*time.Millisecond)) {
		t.Fatalf("put = %+v, %v", it, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.GetMemory(ctx, ns, "k", false)
		if errdefs.IsNotFound(err) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("the item did not expire: %v", err)
		}
		time.Sleep(5 * time.Millisecond) // polling the store's own clock
	}
	if page, err := s.SearchMemory(ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: ns, Query: "brief"}}); err != nil || len(page) != 0 {
		t.Fatalf("search finds an expired item: %v, %v", itemKeys(page), err)
	}
	if nss, err := s.ListMemoryNamespaces(ctx, run.NamespaceQuery{}); err != nil || len(nss) != 0 {
		t.Fatalf("namespaces of expired items: %v, %v", nss, err)
	}
	if err := s.DeleteMemory(ctx, ns, "k"); !errdefs.IsNotFound(err) {
		t.Fatalf("delete of an expired item: %v, want NotFound", err)
	}
	again := putItem(t, s, ctx, ns, "k", map[string]any{"v": "2"}, "", nil)
	if !again.CreatedAt.After(it.CreatedAt) {
		t.Fatalf("a put after expiry kept created_at %v (first %v)", again.CreatedAt, it.CreatedAt)
	}
}

// memoryRefresh: a read with refresh restarts the TTL; one without leaves
// the expiry as it was.
func memoryRefresh(t *testing.T, s store.Memory) {
	ctx, ns := context.Background(), []string{"long"}
	put, err := s.PutMemory(ctx, store.MemoryRecord{Item: run.MemoryItem{Namespace: ns, Key: "k", Value: map[string]any{}, TTL: time.Hour}, Vector: unit(1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.GetMemory(ctx, ns, "k", false)
	if err != nil || !plain.ExpiresAt.Equal(put.ExpiresAt) {
		t.Fatalf("get without refresh: expires %v, want %v (%v)", plain.ExpiresAt, put.ExpiresAt, err)
	}
	waitPast(put.ExpiresAt.Add(-time.Hour))
	got, err := s.GetMemory(ctx, ns, "k", true)
	if err != nil || !got.ExpiresAt.After(put.ExpiresAt) {
		t.Fatalf("get with refresh: expires %v, want after %v (%v)", got.ExpiresAt, put.ExpiresAt, err)
	}
	waitPast(got.ExpiresAt.Add(-time.Hour))
	page, err := s.SearchMemory(ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: ns, RefreshTTL: true}})
	if err != nil || len(page) != 1 || !page[0].ExpiresAt.After(got.ExpiresAt) {
		t.Fatalf("search with refresh: %+v, %v; want expiry after %v", page, err, got.ExpiresAt)
	}
	again, err := s.GetMemory(ctx, ns, "k", false)
	if err != nil || !again.ExpiresAt.Equal(page[0].ExpiresAt) {
		t.Fatalf("the refresh of a search was not stored: %v, want %v (%v)", again.ExpiresAt, page[0].ExpiresAt, err)
	}
	plainVec := search(t, s, ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: ns}, Vector: unit(1, 0)})
	if len(plainVec) != 1 || !plainVec[0].ExpiresAt.Equal(again.ExpiresAt) {
		t.Fatalf("a vector search without refresh changed the expiry: %+v, want %v", plainVec, again.ExpiresAt)
	}
	waitPast(again.ExpiresAt.Add(-time.Hour))
	vec := search(t, s, ctx, store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: ns, RefreshTTL: true}, Vector: unit(1, 0)})
	if len(vec) != 1 || !vec[0].ExpiresAt.After(again.ExpiresAt) || vec[0].Score == nil {
		t.Fatalf("a vector search with refresh: %+v, want expiry after %v", vec, again.ExpiresAt)
	}
}

// waitPast returns once the wall clock, at microsecond precision, is past
// t: a later write then stores a later time.
func waitPast(t time.Time) {
	for !store.StoredTime(time.Now()).After(t) {
		time.Sleep(time.Millisecond)
	}
}
