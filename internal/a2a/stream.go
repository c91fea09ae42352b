package a2a

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/store"
)

// streamBatch bounds how many events one read of the run's log returns.
const streamBatch = 256

// streamIdle is how long a read waits for events before looking again;
// keep-alive comments are the transport's business (Options.KeepAlive).
const streamIdle = time.Minute

// SendStreamingMessage submits the message and streams the task: the Task
// first, then one update per run event from the submission on, until the
// task is terminal or interrupted. Errors found before the stream starts
// reach the client as direct errors (see deferredWriter).
func (h *handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		openStream(ctx)
		if err := h.streamable(); err != nil {
			yield(nil, err)
			return
		}
		var cfg a2a.SendMessageConfig
		if req.Config != nil {
			cfg = *req.Config
		}
		n, err := historyLength(cfg.HistoryLength, DefaultHistoryLength)
		if err != nil {
			yield(nil, err)
			return
		}
		sub, err := h.submit(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		task, err := h.snapshot(ctx, sub.Task, n, true)
		if err != nil || !yield(task, nil) {
			if err != nil {
				yield(nil, err)
			}
			return
		}
		// A continued task's stream starts at its new attempt, where the
		// translator needs no earlier state.
		h.follow(ctx, yield, sub.Task, sub.StartSeq, sub.StartSeq)
	}
}

// SubscribeToTask streams a task: the Task first, then live updates. With
// the resumable-stream cursor (metadata.afterSeq or Last-Event-ID = n) it
// sends exactly the updates after n before the live ones — also for a task
// that has ended meanwhile, so that a dropped stream can always be
// completed. Without a cursor a terminal task is -32004.
func (h *handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		openStream(ctx)
		if err := h.subscribe(ctx, req, yield); err != nil {
			yield(nil, err)
		}
	}
}

func (h *handler) subscribe(ctx context.Context, req *a2a.SubscribeToTaskRequest, yield func(a2a.Event, error) bool) error {
	if err := h.streamable(); err != nil {
		return err
	}
	ci := callInfoFrom(ctx)
	if ci.afterErr != nil {
		return toA2AError(ci.afterErr)
	}
	t, err := h.taskOf(ctx, req.ID)
	if err != nil {
		return err
	}
	after := ci.after
	if ci.hasAfter {
		// Refuse a cursor beyond the end of the log up front.
		st, err := h.s.rt.OpenStream(ctx, t.ID, after)
		if err != nil {
			return toA2AError(err)
		}
		st.Close()
	} else {
		if t.State.Terminal() {
			return a2a.NewError(a2a.ErrUnsupportedOperation, "task "+t.ID+" is "+string(t.State)+"; there is nothing to subscribe to (use GetTask)")
		}
		// Live from here: the cursor is read before the snapshot, so the
		// snapshot reflects at least every event up to it.
		page, err := h.store().ReadEvents(ctx, t.ID, 1<<62, 1)
		if err != nil {
			return toA2AError(err)
		}
		after = page.LastSeq
		if t, err = h.taskOf(ctx, req.ID); err != nil {
			return err
		}
	}
	task, err := h.snapshot(ctx, t, DefaultHistoryLength, true)
	if err != nil {
		return err
	}
	if !yield(task, nil) {
		return nil
	}
	// Prime the translator from the start of the log so that an answer
	// open at the cursor continues under its id.
	h.follow(ctx, yield, t, 0, after)
	return nil
}

// follow reads the run's log from seq `from` and yields the updates of the
// events after `after` (the ones before only prime the translator). It
// returns at the run.end that leaves the task terminal or interrupted, when
// the client goes away, or on error.
func (h *handler) follow(ctx context.Context, yield func(a2a.Event, error) bool, t store.Task, from, after int64) {
	st, err := h.s.rt.OpenStream(ctx, t.ID, from)
	if err != nil {
		yield(nil, toA2AError(err))
		return
	}
	defer st.Close()
	x := newTranslator(t)
	for {
		evs, err := st.Next(ctx, streamBatch, streamIdle)
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				yield(nil, toA2AError(err))
			}
			return
		}
		for _, ev := range evs {
			if up := x.translate(ev, ev.Seq > after); up != nil && !yield(up, nil) {
				return
			}
			if x.ended && ev.Seq >= after {
				return
			}
		}
	}
}

// streamable refuses the streaming methods for an agent whose card does not
// declare streaming.
func (h *handler) streamable() error {
	if !h.agent.Card.Capabilities.Streaming {
		return a2a.NewError(a2a.ErrUnsupportedOperation, "agent "+h.agent.ID+" does not stream (capabilities.streaming is false)")
	}
	return nil
}
