package run

import "time"

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

// ThreadPageLimit returns q's limit, defaulted and bounded.
func (q ThreadQuery) ThreadPageLimit() int { return pageLimit(q.Limit, 10) }

// pageLimit is a query's page size: limit, or def when it is not positive,
// and at most 1000 (every list of the run vocabulary pages so).
func pageLimit(limit, def int) int {
	switch {
	case limit <= 0:
		return def
	case limit > 1000:
		return 1000
	}
	return limit
}
