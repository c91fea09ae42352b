package runtime

import (
	"context"

	"agentd/internal/run"
)

// The faces (api, a2a) read tasks, transcripts and event logs through
// these methods, never through the store: rules about what a caller may
// see (its tenant, retention, "visible only once durable") then live in
// one place. Today they are the store's answers, scoped by the tenant in
// ctx.

// GetTask returns the task id.
func (r *Runtime) GetTask(ctx context.Context, id string) (run.Task, error) {
	return r.st.GetTask(ctx, id)
}

// ListTasks returns a page of tasks.
func (r *Runtime) ListTasks(ctx context.Context, q run.TaskQuery) (run.TaskPage, error) {
	return r.st.ListTasks(ctx, q)
}

// ListMessages returns a page of a context's transcript.
func (r *Runtime) ListMessages(ctx context.Context, q run.MessageQuery) (run.MessagePage, error) {
	return r.st.ListMessages(ctx, q)
}

// ReadEvents returns up to limit stored events of run after seq after.
// Live readers use OpenStream. A volatile log shows events to streams
// before the store has them; those are stored first (runlog's Settle), so
// that what ReadEvents returns — its LastSeq taken as "live from here", the
// artifacts assembled from it — is never behind what a stream delivered.
func (r *Runtime) ReadEvents(ctx context.Context, runID string, after int64, limit int) (run.EventPage, error) {
	if err := r.logs.Settle(ctx, runID); err != nil {
		return run.EventPage{}, err
	}
	return r.st.ReadEvents(ctx, runID, after, limit)
}
