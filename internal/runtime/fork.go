package runtime

import (
	"context"
	"time"

	"agentd/internal/agent"
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

// MetaForkReplay (value true) marks a fork a client asked for: one of an
// engine that resumes (forkResumeFrom) replays what follows its
// checkpoint. Without it, a run that names MetaForkFrom only continues a
// branch — a thread's later runs after a fork — and starts from the
// checkpoint's conversation whatever its engine.
const MetaForkReplay = "agentd.fork_replay"

// forkResumeFrom is the checkpoint a fork of a structured engine resumes
// from — one that draws itself as steps or nodes (engine.Shaper: a
// workflow, a flow) and can resume: the earlier checkpoint, made this
// run's, its board holding the fork's user message after the checkpoint's
// conversation. The engine then skips what the checkpoint holds (a
// workflow re-runs the steps after it; a flow goes on from its node). A
// tool loop's checkpoint is its conversation, which seeds the fork
// instead (forkHistory). nil for any other run.
func (x *execution) forkResumeFrom(ctx context.Context) (*engine.Checkpoint, error) {
	id, _ := x.task.Metadata[MetaForkFrom].(string)
	replay, _ := x.task.Metadata[MetaForkReplay].(bool)
	if id == "" || !replay || !resumesForks(x.agent.Engine) {
		return nil, nil
	}
	ref, err := ParseCheckpointRef(id)
	if err != nil {
		return nil, err
	}
	cp, err := x.r.Checkpoint(ctx, ref)
	if err != nil {
		return nil, err
	}
	board := &engine.BoardSnapshot{Vars: cp.Board.Vars, Channels: make(map[string][]model.Message, len(cp.Board.Channels))}
	for name, msgs := range cp.Board.Channels {
		board.Channels[name] = append([]model.Message(nil), msgs...)
	}
	board.Channels[engine.MainChannel] = append(board.Channels[engine.MainChannel], x.user[0].Message)
	cp.ExecID, cp.Board, cp.Attributes, cp.OriginalStartedAt = x.runID, board, nil, time.Time{}
	return &cp, nil
}

// resumesForks reports whether a fork of eng's runs resumes from the
// checkpoint (forkResumeFrom) rather than starting from its conversation.
func resumesForks(eng engine.Engine) bool {
	_, shaped := engine.ShapeOf(eng)
	return shaped && engine.CapabilitiesOf(eng).SupportsResume
}

// forkOptions adds to a fresh attempt's options, from opts[n] on, the
// checkpoint a fork resumes from (forkResumeFrom), if any.
func (x *execution) forkOptions(ctx context.Context, opts *[5]agent.RunOption, n int) (int, context.Context, error) {
	cp, err := x.forkResumeFrom(ctx)
	if err != nil || cp == nil {
		return n, ctx, err
	}
	opts[n] = agent.WithResumeFrom(cp)
	ctx = engine.WithResumeContext(ctx, engine.ResumeContext{
		Attempt: x.task.Attempt, Signal: engine.SignalManual, CheckpointAt: cp.Timestamp, Step: cp.Step,
	})
	return n + 1, ctx, nil
}
