package store

import (
	"context"

	"agentd/internal/run"
)

// Assistants stores versioned assistants per tenant (the context's
// tenant). It is optional, like Threads: both memstore and pgstore
// implement it, and storetest.RunAssistantsSuite is their contract.
//
// Versions are numbered 1, 2, 3 … per assistant and never change once
// stored. The assistant's latest version is the newest unless
// SetLatestAssistant chose another. Another tenant's assistant is
// NotFound, never a Conflict that would reveal it.
type Assistants interface {
	// CreateAssistant stores version 1 of a new assistant (a.Version is
	// ignored) as its latest; an existing id is a Conflict.
	CreateAssistant(ctx context.Context, a run.Assistant) (run.Assistant, error)
	// AddAssistantVersion stores a new version of assistant a.ID (one
	// more than its newest; a.Version is ignored) and makes it the
	// latest; NotFound when the assistant does not exist.
	AddAssistantVersion(ctx context.Context, a run.Assistant) (run.Assistant, error)
	// GetAssistant returns version of assistant id, its latest when
	// version is 0; NotFound when either does not exist.
	GetAssistant(ctx context.Context, id string, version int) (run.Assistant, error)
	// ListAssistantVersions returns one page of the assistant's versions,
	// newest first, those whose metadata holds q.Metadata (q's AgentID
	// and Name are not used); NotFound when the assistant does not exist.
	ListAssistantVersions(ctx context.Context, id string, q run.AssistantQuery) ([]run.Assistant, error)
	// SetLatestAssistant makes version the assistant's latest and returns
	// it; NotFound when either does not exist.
	SetLatestAssistant(ctx context.Context, id string, version int) (run.Assistant, error)
	// DeleteAssistant deletes the assistant and every version of it;
	// NotFound when absent.
	DeleteAssistant(ctx context.Context, id string) error
	// SearchAssistants returns one page of the matching assistants, each
	// at its latest version, and how many match in all.
	SearchAssistants(ctx context.Context, q run.AssistantQuery) (page []run.Assistant, total int, err error)
}
