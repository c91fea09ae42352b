package a2a

import (
	"context"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// runFeed renders another face's run webhook (a config stored with
// "run": true: the Agent Protocol's, internal/agentproto). It rides the
// same claims, cursor, retries and hand-over as a push config, so a
// replica that dies before the POST was taken leaves it to the next
// claim, on any replica; but its receiver gets one POST — the body
// Options.RunWebhookBody builds from the task — at the first status event
// after which the run has stopped (ended, or waits for input), and its
// delivery is then done (push.Finisher).
type runFeed struct {
	feed
	done bool
}

// Body is nil until the run stopped, then the run webhook's body.
func (f *runFeed) Body(ctx context.Context, ev run.Event) ([]byte, error) {
	if ev.Type != runtime.EventStatus && ev.Type != runtime.EventRunEnd {
		return nil, nil
	}
	t, err := f.h.s.rt.GetTask(ctx, f.task.ID)
	if err != nil {
		return nil, err
	}
	if !t.State.Terminal() && !t.State.Interrupted() {
		return nil, nil
	}
	f.done = true
	build := f.h.s.opts.RunWebhookBody
	if build == nil {
		f.h.s.opts.Logger.Warn("push: a run webhook, but no face builds its body; dropping it", "task_id", t.ID)
		return nil, nil
	}
	return build(ctx, t)
}

// Finished reports whether the one POST went out (or was given up).
func (f *runFeed) Finished() bool { return f.done }
