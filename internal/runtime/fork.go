package runtime

import (
	"context"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// MetaForkFrom is the run metadata key that makes a run a fork: its value,
// a checkpoint id ("<run id>.<n>", CheckpointRef), names the checkpoint
// whose board the run starts from instead of the context's transcript —
// time travel: the conversation continues from an earlier turn, and the
// later history stays readable. The checkpoint must belong to a run of the
// same context (CheckFork).
const MetaForkFrom = "agentd.fork_from"

// MetaKeepCheckpoints is the run metadata key (value true) of a run whose
// checkpoint history must be kept: with a volatile store (memstore) a run
// otherwise writes only the checkpoint it parks on, since no other process
// could resume from the others; a face that serves history and time
// travel (the Agent Protocol) asks for every one.
const MetaKeepCheckpoints = "agentd.keep_checkpoints"

func keepsCheckpoints(metadata map[string]any) bool {
	keep, _ := metadata[MetaKeepCheckpoints].(bool)
	return keep
}

// forkHistory is the history of a fresh attempt of a fork: the main
// channel of the checkpoint it continues from, then its user message. ok
// is false for a run that is not a fork.
func (x *execution) forkHistory(ctx context.Context) (msgs []model.Message, ok bool, err error) {
	id, _ := x.task.Metadata[MetaForkFrom].(string)
	if id == "" {
		return nil, false, nil
	}
	ref, err := ParseCheckpointRef(id)
	if err != nil {
		return nil, true, err
	}
	cp, err := x.r.Checkpoint(ctx, ref)
	if err != nil {
		return nil, true, err
	}
	var board []model.Message
	if cp.Board != nil {
		board = cp.Board.Channels[engine.MainChannel]
	}
	msgs = make([]model.Message, 0, len(board)+1)
	x.seeded = make([]string, 0, len(board)+1)
	for _, m := range board {
		msgs = append(msgs, m.Clone())
		x.seeded = append(x.seeded, m.ID)
	}
	msgs = append(msgs, x.user[0].Message)
	x.seeded = append(x.seeded, x.user[0].ID)
	return withoutOrphanedResults(msgs), true, nil
}

// CheckFork refuses a fork whose checkpoint is not one of contextID's
// (NotFound), before a face sends the run.
func (r *Runtime) CheckFork(ctx context.Context, contextID string, metadata map[string]any) error {
	id, _ := metadata[MetaForkFrom].(string)
	if id == "" {
		return nil
	}
	ref, err := ParseCheckpointRef(id)
	if err != nil {
		return err
	}
	t, err := r.st.GetTask(ctx, ref.RunID)
	if err != nil || t.ContextID != contextID {
		return notInContext(id, contextID)
	}
	if _, err := r.Checkpoint(ctx, ref); err != nil {
		return notInContext(id, contextID)
	}
	return nil
}

func notInContext(id, contextID string) error {
	return errdefs.WithField("checkpoint_id", errdefs.NotFoundf("checkpoint %q is not one of thread %q", id, contextID))
}
