package runtime

import (
	"context"
	"time"
	"unicode/utf8"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// Wait blocks until the task is terminal or waits for input, or ctx ends,
// and returns it as stored (a zero task with ctx's error when ctx ends).
func (r *Runtime) Wait(ctx context.Context, taskID string) (run.Task, error) {
	t, _, err := r.wait(ctx, taskID)
	return t, err
}

// WaitView is Wait plus the task's transcript messages, in the order
// ListMessages(MessageQuery{ContextID, TaskID, Limit: 1000}) returns them.
// When the task's attempt ran here and stored exactly what it knows, the
// messages come from it; otherwise they are read from the store.
func (r *Runtime) WaitView(ctx context.Context, taskID string) (run.Task, []model.Message, error) {
	t, x, err := r.wait(ctx, taskID)
	if err != nil {
		return t, nil, err
	}
	if msgs, ok := x.transcript(t); ok {
		return t, msgs, nil
	}
	page, err := r.st.ListMessages(ctx, run.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Limit: 1000})
	if err != nil {
		return t, nil, err
	}
	msgs := make([]model.Message, len(page.Messages))
	for i, m := range page.Messages {
		msgs[i] = m.Message
	}
	return t, msgs, nil
}

// wait is Wait; it also returns the execution of the task it last waited
// for here (nil if none).
//
// While the task executes (or is queued) here, its state changes only
// through that execution, so wait reads the task once the execution is gone
// (ended); a task that executes elsewhere is polled.
func (r *Runtime) wait(ctx context.Context, taskID string) (run.Task, *execution, error) {
	var last *execution
	for {
		r.mu.Lock()
		x := r.runs[taskID]
		r.mu.Unlock()
		if x != nil {
			select {
			case <-ctx.Done():
				return run.Task{}, nil, ctx.Err()
			case <-x.ended:
			}
			last = x
			if x.finished && x.final.State.Terminal() {
				// Ended here: a terminal task changes no more, and its
				// final commit answered it as stored.
				return x.final, x, nil
			}
		}
		t, err := r.st.GetTask(ctx, taskID)
		if errdefs.IsNotFound(err) && last != nil && last.finished && (last.task.State.Terminal() || last.task.State.Interrupted()) {
			// Ended here and forgotten since by the store's retention (it
			// takes thousands of runs ending meanwhile): answer it as this
			// process stored it rather than not at all.
			return last.task, last, nil
		}
		if err != nil {
			return run.Task{}, nil, err
		}
		if t.State.Terminal() || t.State.Interrupted() {
			return t, last, nil
		}
		if x == nil {
			// Executing elsewhere (another replica): poll.
			timer := time.NewTimer(runlog.PollInterval)
			select {
			case <-ctx.Done():
				timer.Stop()
				return run.Task{}, nil, ctx.Err()
			case <-timer.C:
			}
		}
	}
}

// closeEnded closes x.ended once: x is gone from the runtime.
func (r *Runtime) closeEnded(x *execution) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !x.endedClosed {
		x.endedClosed = true
		close(x.ended)
	}
}

// transcript returns task t's transcript as the execution x stored it,
// when that is exactly what the store holds: x's submission created the
// task, x stored the outcome that t is (same version: every write of the
// task's messages bumps it), and every message is one the store keeps as
// it is. Callers read x only after x.ended.
func (x *execution) transcript(t run.Task) ([]model.Message, bool) {
	if x == nil || !x.createdTask || !x.finished || x.task.Version != t.Version || 1+len(x.stored) > 1000 {
		return nil, false
	}
	msgs := make([]model.Message, 0, 1+len(x.stored))
	msgs = append(msgs, x.user[0].Message)
	for _, m := range x.stored {
		msgs = append(msgs, m.Message)
	}
	for _, m := range msgs {
		if !storedAsIs(m) {
			return nil, false
		}
	}
	return msgs, true
}

// storedNow is the time now as stores keep it.
func storedNow() time.Time { return store.StoredTime(time.Now()) }

// storedAsIs reports whether every store returns m exactly as it is (deep
// equal): valid UTF-8 (a JSON encoding would replace invalid bytes), a time
// in stored form, parts of text alone, metadata of JSON values that
// survive a round trip and no empty map (JSON would drop it).
func storedAsIs(m model.Message) bool {
	if !utf8.ValidString(m.ID) || !utf8.ValidString(string(m.Role)) || !utf8.ValidString(m.Name) ||
		m.CreatedAt.IsZero() || m.CreatedAt.Location() != time.UTC || m.CreatedAt.Nanosecond()%1000 != 0 ||
		!plainMetadata(m.Metadata) {
		return false
	}
	for _, p := range m.Parts {
		if !utf8.ValidString(string(p.Type)) || !utf8.ValidString(p.Text) || !utf8.ValidString(p.MediaType) ||
			p.Data != nil || p.File != nil || p.ToolCall != nil || p.ToolResult != nil || p.Metadata != nil {
			return false
		}
	}
	return true
}

// plainMetadata reports whether md is nil, or a non-empty map that a JSON
// round trip (a store's) gives back unchanged.
func plainMetadata(md map[string]any) bool {
	return md == nil || len(md) > 0 && store.Flat(md)
}
