package store

import (
	"context"
	"time"
)

// Thread is the record of a conversation that a client created by name
// before (or besides) sending to it: the Agent Protocol's thread. Its id is
// the context id of the runs it holds; its metadata is the client's. What
// the thread contains (transcript, runs, checkpoints) lives under the
// context id as for any other conversation.
type Thread struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ThreadQuery selects threads, newest first (by creation).
type ThreadQuery struct {
	// IDs, when set, keeps only these threads.
	IDs []string
	// Metadata, when set, keeps threads whose metadata holds every
	// key with an equal value (JSON containment at the top level).
	Metadata map[string]any
	// Offset skips that many matches; Limit bounds the page (default 10,
	// at most 1000).
	Offset int
	Limit  int
}

// Threads stores thread records per tenant (the context's tenant). It is
// optional: a store that implements it serves the Agent Protocol's
// threads; both memstore and pgstore do, and storetest.RunThreadsSuite is
// their contract.
type Threads interface {
	// CreateThread stores a new thread; an existing id is a Conflict.
	CreateThread(ctx context.Context, t Thread) (Thread, error)
	// GetThread returns the thread, NotFound when it does not exist in
	// the context's tenant.
	GetThread(ctx context.Context, id string) (Thread, error)
	// UpdateThreadMetadata merges metadata into the thread's (a key set
	// to nil is removed) and returns the thread as stored.
	UpdateThreadMetadata(ctx context.Context, id string, metadata map[string]any) (Thread, error)
	// DeleteThread deletes the record (NotFound when absent); the
	// context's runs and transcript are left to retention.
	DeleteThread(ctx context.Context, id string) error
	// SearchThreads returns one page of the matching threads and how
	// many match in all.
	SearchThreads(ctx context.Context, q ThreadQuery) (page []Thread, total int, err error)
}

// ThreadPageLimit returns q's limit, defaulted and bounded.
func (q ThreadQuery) ThreadPageLimit() int {
	switch {
	case q.Limit <= 0:
		return 10
	case q.Limit > 1000:
		return 1000
	}
	return q.Limit
}
