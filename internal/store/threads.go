package store

import (
	"context"

	"agentd/internal/run"
)

// Threads stores thread records per tenant (the context's tenant). It is
// optional: a store that implements it serves the Agent Protocol's
// threads; both memstore and pgstore do, and storetest.RunThreadsSuite is
// their contract.
type Threads interface {
	// CreateThread stores a new thread; an existing id is a Conflict.
	CreateThread(ctx context.Context, t run.Thread) (run.Thread, error)
	// GetThread returns the thread, NotFound when it does not exist in
	// the context's tenant.
	GetThread(ctx context.Context, id string) (run.Thread, error)
	// UpdateThreadMetadata merges metadata into the thread's (a key set
	// to nil is removed) and returns the thread as stored.
	UpdateThreadMetadata(ctx context.Context, id string, metadata map[string]any) (run.Thread, error)
	// DeleteThread deletes the record (NotFound when absent); the
	// context's runs and transcript are left to retention.
	DeleteThread(ctx context.Context, id string) error
	// SearchThreads returns one page of the matching threads and how
	// many match in all.
	SearchThreads(ctx context.Context, q run.ThreadQuery) (page []run.Thread, total int, err error)
}
