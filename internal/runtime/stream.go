package runtime

import (
	"context"

	"agentd/internal/run"
	"agentd/internal/runlog"
)

// Stream reads one run's events after a seq, each exactly once and in
// order: the run log's reader (runlog.Stream).
type Stream = runlog.Stream

// OpenStream starts reading run's events after seq `after` (0 = from the
// beginning). It fails with NotFound for an unknown run (or one of another
// tenant) and with Validation when after lies outside the log.
func (r *Runtime) OpenStream(ctx context.Context, runID string, after int64) (*Stream, error) {
	// A run whose log is open here in ctx's tenant exists (a streaming
	// send opens the run it just created); any other is looked up.
	if !r.logs.OpenIn(runID, run.TenantFrom(ctx)) {
		if _, err := r.st.GetTask(ctx, runID); err != nil {
			return nil, err
		}
	}
	return r.logs.Open(ctx, runID, after)
}
