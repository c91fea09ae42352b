package store

import (
	"context"
	"time"
)

// Pruner is implemented by stores that prune finished runs by age
// (retention). It is apart from Store because it works across tenants:
// only the operator's retention calls it.
type Pruner interface {
	// PruneFinished deletes the events and checkpoints of up to q.Limit
	// runs, of every tenant, whose task reached a terminal state before
	// q.Before (and, when q.After is set, not before it), oldest first. The
	// tasks and their transcripts stay: their event logs then read as
	// pruned through their last event, so a reader asking for them gets
	// EventPage.PrunedThrough. Fewer runs than q.Limit means none is left.
	PruneFinished(ctx context.Context, q PruneQuery) (Pruned, error)
}

// PruneQuery selects the finished runs to prune.
type PruneQuery struct {
	Before time.Time
	// After lets a caller skip the runs an earlier call already pruned
	// (Pruned.Through); zero means from the oldest.
	After time.Time
	Limit int
}

// Pruned is what one PruneFinished call removed.
type Pruned struct {
	Runs, Events, Checkpoints int64
	// Through is when the latest pruned run finished (zero if none was).
	Through time.Time
}
