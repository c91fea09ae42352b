package a2a

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/run"
	"agentd/internal/runtime"
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
		yield = callInfoFrom(ctx).flush.count(clientErrors(ctx, yield))
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
		if h.answersDirectly(req) {
			res, err := h.SendMessage(ctx, req)
			if err == nil {
				yield(res.(a2a.Event), nil) // a Message alone, or the Task it became
				return
			}
			yield(nil, err)
			return
		}
		sub, err := h.submit(ctx, req, runtime.AwaitStream)
		if err != nil {
			yield(nil, err)
			return
		}
		if sub.Duplicate {
			// A retried send started nothing: the client gets the task as it
			// is now, like a subscriber without a cursor, never the
			// submission's old updates (they may contradict the Task). The
			// cursor is read before the snapshot, as subscribe does.
			page, err := h.reads().ReadEvents(ctx, sub.Task.ID, 1<<62, 1)
			if err != nil {
				yield(nil, toA2AError(ctx, err))
				return
			}
			t, err := h.reads().GetTask(ctx, sub.Task.ID)
			if err != nil {
				yield(nil, toA2AError(ctx, err))
				return
			}
			if err := h.join(ctx, yield, t, page.LastSeq, n); err != nil {
				yield(nil, err)
			}
			return
		}
		// Opened first, so that the run's log stays here for it; the
		// opening Task is read from the store once the task is there.
		st, err := h.s.rt.OpenStream(ctx, sub.Task.ID, sub.StartSeq)
		if err != nil {
			yield(nil, toA2AError(ctx, err))
			return
		}
		defer st.Close()
		if sub.Durable(ctx) != nil {
			return // the client left; the run goes on
		}
		task, err := h.openingTask(ctx, sub.Task, n, sub.StartSeq)
		if err != nil || !yield(task, nil) {
			if err != nil {
				yield(nil, err)
			}
			return
		}
		// A new attempt starts after a run.end (or at the log's start):
		// no answer is open, nothing to prime.
		h.followStream(ctx, yield, sub.Task, newTranslator(sub.Task), st)
	}
}

// SubscribeToTask streams a task: the Task first, then live updates. With
// the resumable-stream cursor (metadata.afterSeq or Last-Event-ID = n) it
// sends exactly the updates after n before the live ones — also for a task
// that has ended meanwhile, so that a dropped stream can always be
// completed. Without a cursor a terminal task is -32004.
func (h *handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield = callInfoFrom(ctx).flush.count(clientErrors(ctx, yield))
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
		return toA2AError(ctx, ci.afterErr)
	}
	t, err := h.taskOf(ctx, req.ID)
	if err != nil {
		return err
	}
	if !ci.hasAfter {
		if t.State.Terminal() {
			return a2a.NewError(a2a.ErrUnsupportedOperation, "task "+t.ID+" is "+string(t.State)+"; there is nothing to subscribe to (use GetTask)")
		}
		// Live from here: the cursor is read before the snapshot, so the
		// snapshot reflects at least every event up to it.
		page, err := h.reads().ReadEvents(ctx, t.ID, 1<<62, 1)
		if err != nil {
			return toA2AError(ctx, err)
		}
		if t, err = h.taskOf(ctx, req.ID); err != nil {
			return err
		}
		return h.join(ctx, yield, t, page.LastSeq, DefaultHistoryLength)
	}
	// Refuse a cursor beyond the end of the log up front.
	st, err := h.s.rt.OpenStream(ctx, t.ID, ci.after)
	if err != nil {
		return toA2AError(ctx, err)
	}
	st.Close()
	// The client holds the artifacts up to its cursor, and the updates
	// after it follow: assembling them all would cost a read of the whole
	// log on every resume.
	task, err := h.snapshot(ctx, t, DefaultHistoryLength, recordedArtifacts)
	if err != nil {
		return err
	}
	if !yield(task, nil) {
		return nil
	}
	x, err := h.prime(ctx, t, ci.after, true)
	if err != nil {
		return err
	}
	if !x.ended {
		h.follow(ctx, yield, t, x, ci.after)
	}
	return nil
}

// join streams t to a client that has seen none of it: the Task (with n
// history messages), then the updates of the events after seq after, read
// before t was. A task that is terminal or waits for input has nothing
// live to send: the Task is all.
//
// The Task carries the artifacts as they stood at seq after, the answer
// open there included, so the updates that follow append to it: a client
// that joins mid-answer (or retries a send whose answer it lost) ends up
// with the whole answer, not its tail.
func (h *handler) join(ctx context.Context, yield func(a2a.Event, error) bool, t run.Task, after int64, n int) error {
	task, err := h.openingTask(ctx, t, n, after)
	if err != nil {
		return err
	}
	if !yield(task, nil) || t.State.Terminal() || t.State.Interrupted() {
		return nil
	}
	x, err := h.prime(ctx, t, after, true)
	if err != nil {
		return err
	}
	h.follow(ctx, yield, t, x, after)
	return nil
}

// openingTask is the Task a stream opens with: t with n history messages
// and its artifacts as they stood at seq after, when the stream's updates
// start.
func (h *handler) openingTask(ctx context.Context, t run.Task, n int, after int64) (*a2a.Task, error) {
	task, err := h.snapshot(ctx, t, n, noArtifacts)
	if err != nil {
		return nil, err
	}
	if task.Artifacts, err = h.artifacts(ctx, t, after); err != nil {
		return nil, err
	}
	return task, nil
}

// follow yields the updates x translates from the run's events after seq
// `after`. It returns at the run.end that leaves the task terminal or
// interrupted, when the client goes away, or on error.
func (h *handler) follow(ctx context.Context, yield func(a2a.Event, error) bool, t run.Task, x *translator, after int64) {
	st, err := h.s.rt.OpenStream(ctx, t.ID, after)
	if err != nil {
		yield(nil, toA2AError(ctx, err))
		return
	}
	defer st.Close()
	h.followStream(ctx, yield, t, x, st)
}

// followStream is follow on a stream already open. The events read are
// translated a group of at most flushGroup updates at a time, and each
// group is yielded whole, so that the writer can flush once per group
// (batchFlush).
func (h *handler) followStream(ctx context.Context, yield func(a2a.Event, error) bool, t run.Task, x *translator, st *runtime.Stream) {
	flush := &callInfoFrom(ctx).flush
	var ups []a2a.Event
	for {
		evs, err := st.Next(ctx, streamBatch, streamIdle)
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				yield(nil, toA2AError(ctx, err))
			}
			return
		}
		for len(evs) > 0 {
			var end bool
			ups, evs, end, err = h.translateGroup(ctx, t, x, evs, ups[:0])
			flush.hold(len(ups))
			for _, up := range ups {
				if !yield(up, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, err)
			}
			if end || err != nil {
				return
			}
			clear(ups) // the updates are the writer's now
		}
	}
}

// flushGroup bounds the updates a stream holds back from the socket to
// flush them at once: enough to make a write per group cheap, few enough
// that the first of them waits well under a millisecond.
const flushGroup = 32

// translateGroup appends to ups the updates x translates from evs, up to
// flushGroup of them or the one that ends the stream (end: a run.end that
// leaves the task terminal or interrupted, or a gap after which nothing
// follows), and returns the events left.
func (h *handler) translateGroup(ctx context.Context, t run.Task, x *translator, evs []run.Event, ups []a2a.Event) (_ []a2a.Event, rest []run.Event, end bool, _ error) {
	for i, ev := range evs {
		up := x.translate(ev)
		if ev.Type == runtime.EventGap && up != nil {
			state, last, err := h.gapEnds(ctx, t.ID, ev.Seq)
			if err != nil {
				return ups, nil, true, err
			}
			if last {
				up.(*a2a.TaskStatusUpdateEvent).Status.State = state
				return append(ups, up), nil, true, nil
			}
		}
		if up != nil {
			ups = append(ups, up)
		}
		if x.ended {
			return ups, nil, true, nil
		}
		if len(ups) == flushGroup {
			return ups, evs[i+1:], false, nil
		}
	}
	return ups, nil, false, nil
}

// gapEnds reports whether a gap through seq is the last update of the
// stream — retention pruned the run's final run.end, and the task is
// terminal or waits for input — and the task's state if so. The task is
// read first: a task seen terminal or interrupted gets new events only in
// a later attempt, which the read of the log after it would see.
func (h *handler) gapEnds(ctx context.Context, runID string, seq int64) (a2a.TaskState, bool, error) {
	t, err := h.reads().GetTask(ctx, runID)
	if err != nil {
		return "", false, toA2AError(ctx, err)
	}
	if !t.State.Terminal() && !t.State.Interrupted() {
		return "", false, nil
	}
	page, err := h.reads().ReadEvents(ctx, runID, seq, 1)
	if err != nil {
		return "", false, toA2AError(ctx, err)
	}
	return toState(t.State), len(page.Events) == 0, nil
}

// streamable refuses the streaming methods for an agent whose card does not
// declare streaming.
func (h *handler) streamable() error {
	if !h.agent.Card.Capabilities.Streaming {
		return a2a.NewError(a2a.ErrUnsupportedOperation, "agent "+h.agent.ID+" does not stream (capabilities.streaming is false)")
	}
	return nil
}

// clientErrors passes every error a stream yields through toA2AError, the
// one place that decides what a client may read of it: an error found
// mid-stream (the store gone while following the log) names nothing
// internal, like the answer to a plain request.
func clientErrors(ctx context.Context, yield func(a2a.Event, error) bool) func(a2a.Event, error) bool {
	return func(ev a2a.Event, err error) bool {
		return yield(ev, toA2AError(ctx, err))
	}
}

// answersDirectly reports whether a streaming send opens a task whose
// answer the agent says will be a Message (engine.DirectAnswerer). The
// spec's stream is then that one Message, so the send is answered as a
// blocking one — there is no task to follow. Without a taskId only: a
// message to a task in progress continues the task.
func (h *handler) answersDirectly(req *a2a.SendMessageRequest) bool {
	if req.Message == nil || req.Message.TaskID != "" || (req.Config != nil && req.Config.PushConfig != nil) {
		return false
	}
	msg, err := fromMessage(req.Message)
	return err == nil && h.agent.AnswersDirectly(msg)
}
