package engine

import "context"

// CheckpointedPublisher is an optional capability of a Host, found by
// type assertion: PublishCheckpointed publishes ev as Publish does and
// records cp as the checkpoint that covers it. cp becomes durable in the
// same write as ev — never before it, never after it — so an
// engine that relays a stream it cannot replay at will (a peer's answer,
// engine/remote) finds after a crash a checkpoint that covers exactly the
// events its run's log holds: nothing relayed twice, nothing skipped.
// Newer checkpoints may replace older ones not yet written (one per
// write of the log, not one per event); a checkpoint is written only with
// a write that holds its event. Hosts that log nothing may save cp as
// Checkpoint would.
type CheckpointedPublisher interface {
	PublishCheckpointed(ctx context.Context, ev Event, cp Checkpoint) error
}

// WithCheckpoint returns a Publisher that publishes through pub's
// PublishCheckpointed with cp, so that code that publishes through a
// Publisher can publish a checkpointed event; ok is false when pub lacks the capability.
func WithCheckpoint(pub Publisher, cp Checkpoint) (_ Publisher, ok bool) {
	cpub, ok := pub.(CheckpointedPublisher)
	if !ok {
		return nil, false
	}
	return checkpointed{pub: cpub, cp: cp}, true
}

type checkpointed struct {
	pub CheckpointedPublisher
	cp  Checkpoint
}

func (c checkpointed) Publish(ctx context.Context, ev Event) error {
	return c.pub.PublishCheckpointed(ctx, ev, c.cp)
}

// CheckpointStager is an optional capability of a Host, found by type
// assertion: StageCheckpoint records cp as the run's checkpoint, made
// durable by the next write of the run's log (the same store transaction)
// rather than by a write of its own. It is for a checkpoint after which
// nothing happens that a later attempt must not repeat before the run
// writes again — a final answer, followed by the run's end — so that a
// crash in between costs at most a repeat of work the engine can redo,
// and a run costs the store one write fewer. Hosts without it, and every
// other checkpoint: Checkpoint.
type CheckpointStager interface {
	StageCheckpoint(ctx context.Context, cp Checkpoint) error
}
