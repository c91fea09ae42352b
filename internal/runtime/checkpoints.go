package runtime

import (
	"context"
	"strconv"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// RunCheckpoints returns the checkpoint history of a run of the caller's
// tenant, oldest first (NotFound for an unknown run or another tenant's).
func (r *Runtime) RunCheckpoints(ctx context.Context, runID string) ([]engine.Checkpoint, error) {
	if _, err := r.st.GetTask(ctx, runID); err != nil {
		return nil, err
	}
	return r.st.ListCheckpoints(ctx, runID)
}

// CheckpointRef names one checkpoint: the run that wrote it and its
// position in the run's history (1 for the first).
type CheckpointRef struct {
	RunID string
	N     int
}

// String is the ref's id, "<run id>.<n>".
func (c CheckpointRef) String() string { return c.RunID + "." + strconv.Itoa(c.N) }

// ParseCheckpointRef reads "<run id>.<n>".
func ParseCheckpointRef(id string) (CheckpointRef, error) {
	i := strings.LastIndexByte(id, '.')
	if i <= 0 {
		return CheckpointRef{}, errdefs.Validationf("checkpoint id %q: want <run id>.<n>", id)
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 1 {
		return CheckpointRef{}, errdefs.Validationf("checkpoint id %q: want <run id>.<n> with n ≥ 1", id)
	}
	return CheckpointRef{RunID: id[:i], N: n}, nil
}

// Checkpoint returns the checkpoint ref names (NotFound when the run or
// the position does not exist in the caller's tenant).
func (r *Runtime) Checkpoint(ctx context.Context, ref CheckpointRef) (engine.Checkpoint, error) {
	cps, err := r.RunCheckpoints(ctx, ref.RunID)
	if err != nil {
		return engine.Checkpoint{}, err
	}
	if ref.N > len(cps) {
		return engine.Checkpoint{}, errdefs.NotFoundf("checkpoint %s not found: run %s has %d", ref, ref.RunID, len(cps))
	}
	return cps[ref.N-1], nil
}
