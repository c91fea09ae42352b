package run

import "agentd/internal/model"

// Message is a transcript entry: a model.Message in a context, optionally
// produced by or addressed to a task.
type Message struct {
	ContextID string `json:"context_id"`
	TaskID    string `json:"task_id,omitempty"`
	// Position orders a context's transcript; the store assigns it
	// (1, 2, 3, … per context).
	Position int64 `json:"position"`
	model.Message
}

// MessageQuery selects a context's transcript in position order.
type MessageQuery struct {
	ContextID string
	// TaskID, when set, keeps only that task's messages.
	TaskID string
	// After continues after a position (0 = from the start).
	After int64
	// Last, when > 0, returns only the last n matching messages (After is
	// still honoured); Limit is ignored then.
	Last int
	// Limit bounds the page (default 100, at most 1000).
	Limit int
}

// MessagePage is one page of a transcript.
type MessagePage struct {
	Messages []Message
	// NextAfter is the position to pass as After for the next page; 0 when
	// this is the last page.
	NextAfter int64
}
