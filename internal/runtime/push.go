package runtime

import (
	"context"
	"time"

	"agentd/internal/run"
)

// Push-notification configs and their delivery, for the faces (the A2A
// front end delivers them): stored in the context's tenant, like every
// other record a face reads or writes through the runtime. Delivery claims
// are taken in this replica's name, so that a replica that dies loses them
// to the others when they expire, as it loses its runs' leases.

// PutPushConfig creates or replaces a task's push config.
func (r *Runtime) PutPushConfig(ctx context.Context, c run.PushConfig) error {
	return r.st.PutPushConfig(ctx, c)
}

// GetPushConfig returns the push config id of task taskID.
func (r *Runtime) GetPushConfig(ctx context.Context, taskID, id string) (run.PushConfig, error) {
	return r.st.GetPushConfig(ctx, taskID, id)
}

// ListPushConfigs returns the push configs of task taskID, ordered by id.
func (r *Runtime) ListPushConfigs(ctx context.Context, taskID string) ([]run.PushConfig, error) {
	return r.st.ListPushConfigs(ctx, taskID)
}

// DeletePushConfig deletes the push config id of task taskID.
func (r *Runtime) DeletePushConfig(ctx context.Context, taskID, id string) error {
	return r.st.DeletePushConfig(ctx, taskID, id)
}

// ClaimPushDeliveries claims for this replica, until now+ttl, up to limit
// push configs (of any tenant) whose delivery is pending and unclaimed or
// whose claim expired (store.PushConfigs).
func (r *Runtime) ClaimPushDeliveries(ctx context.Context, ttl time.Duration, limit int) ([]run.PushConfig, error) {
	return r.st.ClaimPushDeliveries(ctx, r.replica, ttl, limit)
}

// SavePushDelivery records a claimed config's delivery cursor and extends
// its claim, provided this replica still holds it (Conflict otherwise).
func (r *Runtime) SavePushDelivery(ctx context.Context, c run.PushConfig, ttl time.Duration) (run.PushConfig, error) {
	return r.st.SavePushDelivery(ctx, c, ttl)
}

// SavePushDeliveries records many claimed configs' cursors (each in its
// own tenant) in one store round trip; saved[i] is false for a config
// whose claim this replica lost or that is gone.
func (r *Runtime) SavePushDeliveries(ctx context.Context, cs []run.PushConfig, ttl time.Duration) ([]bool, error) {
	return r.st.SavePushDeliveries(ctx, cs, ttl)
}
