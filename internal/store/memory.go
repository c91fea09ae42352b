package store

import (
	"context"

	"agentd/internal/run"
)

// Memory stores long-term memory items per tenant (the context's tenant).
// It is optional, like Threads: both memstore and pgstore implement it,
// and storetest.RunMemorySuite is their contract:
//
//   - PutMemory writes the item whole (an upsert): its created_at is kept
//     across writes of a live item, its updated_at and expiry are set anew.
//   - An expired item is invisible to every method, as if deleted.
//   - A read with refresh (GetMemory's refresh, MemoryQuery.RefreshTTL)
//     restarts the TTL of the items it returns.
//   - Nothing of another tenant is ever read, listed or changed.
//
// The caller (internal/memory) validates namespaces and keys, extracts the
// text an item is searched by and computes its vector; the store keeps
// them and ranks by them.
type Memory interface {
	// PutMemory stores rec and returns the item as stored.
	PutMemory(ctx context.Context, rec MemoryRecord) (run.MemoryItem, error)
	// GetMemory returns the item, NotFound when absent or expired.
	GetMemory(ctx context.Context, namespace []string, key string, refresh bool) (run.MemoryItem, error)
	// DeleteMemory deletes the item, NotFound when absent or expired.
	DeleteMemory(ctx context.Context, namespace []string, key string) error
	// SearchMemory returns one page of the matching items (see
	// MemoryQuery for the order).
	SearchMemory(ctx context.Context, q MemoryQuery) ([]run.MemoryItem, error)
	// ListMemoryNamespaces returns one page of the namespaces holding live
	// items, in label order.
	ListMemoryNamespaces(ctx context.Context, q run.NamespaceQuery) ([][]string, error)
}

// MemoryRecord is an item to store with what it is searched by.
type MemoryRecord struct {
	// Item's Namespace, Key, Value and TTL are stored; the store sets the
	// times.
	Item run.MemoryItem
	// Text is what a text query matches (empty: the item is found by no
	// text query).
	Text string
	// Vector is the item's embedding, of unit length (nil: the item is
	// found by no vector query).
	Vector []float32
}

// MemoryQuery is a search. Its order: with Vector, the items holding a
// vector of the same length, by cosine similarity (Score), highest first;
// else with Query, the items whose text matches it, by text rank (Score);
// else every match, most recently updated first. Ties go by namespace and
// key.
type MemoryQuery struct {
	run.MemorySearch
	// Vector is the query's embedding, of unit length.
	Vector []float32
}
