package store

import "context"

// RunDeleter is implemented by stores that delete one run on request (the
// Agent Protocol's run deletion and its rollback multitask strategy). Both
// memstore and pgstore do; storetest.RunRunDeleterSuite is the contract.
type RunDeleter interface {
	// DeleteRun deletes the task id of the context's tenant and everything
	// that is the run's: its event log, checkpoints, push configs,
	// idempotency keys, lease, and its messages in its context's
	// transcript (the context's other messages keep their positions). The
	// run then reads as not found. NotFound when there is no such task;
	// Conflict, deleting nothing, when the task is not in a terminal state.
	DeleteRun(ctx context.Context, id string) error
}
