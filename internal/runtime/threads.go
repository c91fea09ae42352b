package runtime

import (
	"context"

	"github.com/google/uuid"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// ThreadStatus is what a thread is doing, from its newest run.
type ThreadStatus string

// The statuses of a thread (the Agent Protocol's names).
const (
	ThreadIdle        ThreadStatus = "idle"
	ThreadBusy        ThreadStatus = "busy"
	ThreadInterrupted ThreadStatus = "interrupted"
	ThreadError       ThreadStatus = "error"
)

// threadStore returns the store's thread records, looking through
// wrappers that expose Unwrap (the metrics' store).
func (r *Runtime) threadStore() (store.Threads, error) {
	st := r.st
	for {
		if ts, ok := st.(store.Threads); ok {
			return ts, nil
		}
		u, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			return nil, errdefs.Public(errdefs.NotAvailablef("this server's store keeps no thread records"))
		}
		st = u.Unwrap()
	}
}

// CreateThread records a thread (a context known by name before its first
// run). An empty id gets a new one; a client's id must be a valid id.
func (r *Runtime) CreateThread(ctx context.Context, t run.Thread) (run.Thread, error) {
	ts, err := r.threadStore()
	if err != nil {
		return run.Thread{}, err
	}
	if t.ID == "" {
		t.ID = uuid.Must(uuid.NewV7()).String()
	} else if err := checkClientID(t.ID); err != nil {
		return run.Thread{}, errdefs.WithField("thread_id", err)
	}
	return ts.CreateThread(ctx, t)
}

// GetThread returns the thread of the caller's tenant (NotFound for
// another's).
func (r *Runtime) GetThread(ctx context.Context, id string) (run.Thread, error) {
	ts, err := r.threadStore()
	if err != nil {
		return run.Thread{}, err
	}
	return ts.GetThread(ctx, id)
}

// UpdateThreadMetadata merges metadata into the thread's.
func (r *Runtime) UpdateThreadMetadata(ctx context.Context, id string, metadata map[string]any) (run.Thread, error) {
	ts, err := r.threadStore()
	if err != nil {
		return run.Thread{}, err
	}
	return ts.UpdateThreadMetadata(ctx, id, metadata)
}

// DeleteThread cancels the thread's active run, if any, and deletes its
// record; its past runs and transcript stay until retention prunes them.
func (r *Runtime) DeleteThread(ctx context.Context, id string) error {
	ts, err := r.threadStore()
	if err != nil {
		return err
	}
	if _, err := ts.GetThread(ctx, id); err != nil {
		return err
	}
	if head, err := r.ThreadHead(ctx, id); err == nil && head != nil && !head.State.Terminal() {
		if _, err := r.Cancel(ctx, head.ID); err != nil && !errdefs.IsConflict(err) {
			return err
		}
	}
	return ts.DeleteThread(ctx, id)
}

// SearchThreads returns one page of the caller's threads.
func (r *Runtime) SearchThreads(ctx context.Context, q run.ThreadQuery) ([]run.Thread, int, error) {
	ts, err := r.threadStore()
	if err != nil {
		return nil, 0, err
	}
	return ts.SearchThreads(ctx, q)
}

// ThreadHead returns the newest run of the thread's context, nil when it
// has none.
func (r *Runtime) ThreadHead(ctx context.Context, id string) (*run.Task, error) {
	page, err := r.st.ListTasks(ctx, run.TaskQuery{ContextID: id, Limit: 1})
	if err != nil || len(page.Tasks) == 0 {
		return nil, err
	}
	return &page.Tasks[0], nil
}

// StatusOf is the status of a thread whose newest run is head (nil: none).
func StatusOf(head *run.Task) ThreadStatus {
	if head == nil {
		return ThreadIdle
	}
	switch {
	case head.State.Interrupted():
		return ThreadInterrupted
	case head.State == run.StateFailed:
		return ThreadError
	case !head.State.Terminal():
		return ThreadBusy
	}
	return ThreadIdle
}

// CopyThread records a new thread with from's metadata and a copy of its
// transcript (the messages no longer name the runs that wrote them, which
// belong to from). The copy has no runs of its own yet.
func (r *Runtime) CopyThread(ctx context.Context, from string) (run.Thread, error) {
	src, err := r.GetThread(ctx, from)
	if err != nil {
		return run.Thread{}, err
	}
	dst, err := r.CreateThread(ctx, run.Thread{Metadata: src.Metadata})
	if err != nil {
		return run.Thread{}, err
	}
	for after := int64(0); ; {
		page, err := r.st.ListMessages(ctx, run.MessageQuery{ContextID: from, After: after, Limit: 1000})
		if err != nil {
			return run.Thread{}, err
		}
		if len(page.Messages) > 0 {
			msgs := make([]run.Message, len(page.Messages))
			for i, m := range page.Messages {
				msgs[i] = run.Message{ContextID: dst.ID, Message: m.Message}
			}
			if err := r.st.Apply(ctx, store.Change{Messages: msgs}); err != nil {
				return run.Thread{}, err
			}
		}
		if page.NextAfter == 0 {
			return dst, nil
		}
		after = page.NextAfter
	}
}
