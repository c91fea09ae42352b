package a2a

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/store"
)

// errRunDelivered ends the delivery of a run webhook: its one POST was
// taken or given up.
var errRunDelivered = errors.New("run webhook delivered")

// handleRun is handle for a run webhook: the config rides the same claim,
// cursor and retries as a push config (so a replica that dies before the
// POST was taken leaves it to the next claim round, on any replica), but
// its receiver gets one POST — RunBody's — at the first status update
// after which the run has stopped (ended, or waits for input), and the
// config is then done.
func (f *pushFollower) handleRun(ctx context.Context, ev store.Event, up a2a.Event) error {
	if _, ok := up.(*a2a.TaskStatusUpdateEvent); !ok {
		f.cursor = ev.Seq
		return nil
	}
	t, err := f.d.s.rt.GetTask(ctx, f.c.TaskID)
	if err != nil {
		return err
	}
	if !t.State.Terminal() && !t.State.Interrupted() {
		f.cursor = ev.Seq
		return nil
	}
	build := f.d.opts.RunBody
	if build == nil {
		f.d.s.opts.Logger.Warn("push: a run webhook, but no face builds its body; dropping it", "task_id", f.c.TaskID, "config_id", f.c.ID)
		return errRunDelivered
	}
	body, err := build(ctx, t)
	if err != nil {
		return err
	}
	var attempts int
	err = f.holding(ctx, func(ctx context.Context) (err error) {
		attempts, err = f.d.send(f.traced(ctx), f.hook, body, false)
		return err
	})
	if ctx.Err() != nil || claimLost(err) {
		return cmp.Or(err, ctx.Err()) // not delivered: the next holder sends it
	}
	f.cursor = ev.Seq
	if err != nil {
		f.d.s.opts.Logger.Warn("push: run webhook given up", "task_id", f.c.TaskID, "config_id", f.c.ID, "attempts", attempts, "err", err)
	}
	if o := f.d.opts.Observe; o != nil {
		o(Delivery{TaskID: f.c.TaskID, ConfigID: f.c.ID, Seq: ev.Seq, EventTime: ev.Time, Sent: time.Now(), Attempts: attempts, Err: err})
	}
	return errRunDelivered
}
