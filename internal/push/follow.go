package push

import (
	"cmp"
	"context"
	"errors"
	"io"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// handOverTimeout bounds the store write that hands a claim over when a
// replica stops.
const handOverTimeout = 2 * time.Second

// streamBatch bounds how many events one read of the run's log returns.
const streamBatch = 256

// follower delivers one claimed config's updates: it reads the task's
// log after the config's cursor, renders each event as the face's Feed
// says (for A2A: as a stream resumed at the cursor would carry it), and
// posts every update to the webhook in order, each until it is taken or
// given up, saving the cursor after each. A kill loses nothing (the next
// holder resumes after the saved cursor) and repeats at most the update
// whose delivery was not yet saved.
type follower struct {
	d    *Deliverer
	c    run.PushConfig // c.Delivered: the cursor as last saved
	feed Feed
	task run.Task
	// cursor is the seq of the last event handled (delivered, or without
	// an update); saved is when the claim was last renewed.
	cursor int64
	saved  time.Time
	// open is the webhook's circuit: set once an update was given up
	// after its retries failed, cleared by the next update taken. While
	// it is open, each update gets one attempt, no retries: a dead
	// webhook costs one attempt per update instead of RetryFor each.
	open bool
}

// follow delivers c until its task ends (the config is then done), its
// claim is lost, or ctx ends (the claim is handed over at once).
func (d *Deliverer) follow(ctx context.Context, c run.PushConfig) {
	// A claimed config may come back parked at an older version of its
	// task (the task moved since): delivery goes on, and every save
	// below must record it as no longer parked.
	c.ParkedVersion = 0
	f := &follower{d: d, c: c, cursor: c.Delivered, saved: time.Now()}
	err := f.run(ctx)
	switch {
	case err == nil, claimLost(err):
	case ctx.Err() != nil:
		f.handOver(ctx)
	default:
		d.log.Warn("push: delivery stopped; another claim round resumes it", "task_id", c.TaskID, "config_id", c.ID, "err", err)
		f.handOver(ctx)
	}
}

func (f *follower) run(ctx context.Context) error {
	rt := f.d.rt
	t, err := rt.GetTask(ctx, f.c.TaskID)
	if errdefs.IsNotFound(err) {
		return f.save(ctx, true) // the task is gone: nothing will follow
	}
	if err != nil {
		return err
	}
	f.task = t
	// The webhook got every update up to the cursor, like a client
	// resuming a stream there.
	f.feed, err = f.d.render.Feed(ctx, f.c, t, f.cursor)
	if errdefs.IsValidation(err) {
		f.d.log.Error("push: stored config is unreadable; dropping it", "task_id", f.c.TaskID, "config_id", f.c.ID, "err", err)
		return f.save(ctx, true)
	}
	if err != nil {
		return err
	}
	st, err := rt.OpenStream(ctx, t.ID, f.cursor)
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		evs, err := st.Next(ctx, streamBatch, f.renewEvery())
		if errors.Is(err, io.EOF) {
			return f.save(ctx, true)
		}
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			if parked, err := f.park(ctx); parked || err != nil {
				return err
			}
		}
		for _, ev := range evs {
			if err := f.handle(ctx, ev); err != nil {
				return err
			}
			if fin, ok := f.feed.(Finisher); ok && fin.Finished() {
				return f.save(ctx, true) // its one update went out: done
			}
		}
		if err := f.keep(ctx, f.cursor != f.c.Delivered); err != nil {
			return err
		}
	}
}

// park ends the delivery of a task that waits for input (input-required,
// auth-required) once every event of its log was handled: the config is
// saved parked at the task's version, its claim released, and the claim
// sweep takes it up again once the version moves (the task resumed, was
// canceled, timed out). A waiting task then holds no goroutine, log
// reader or claim renewal on any replica. It reports whether it parked.
//
// The task is read before the log's end: an event logged after that read
// comes with a new task version, so the config is not left parked behind
// it (the store checks the version again when it parks, pgstore under a
// lock on the task's row).
func (f *follower) park(ctx context.Context) (bool, error) {
	rt := f.d.rt
	t, err := rt.GetTask(ctx, f.c.TaskID)
	if err != nil || !t.State.Interrupted() {
		return false, err
	}
	page, err := rt.ReadEvents(ctx, t.ID, 1<<62, 1) // its LastSeq
	if err != nil || page.LastSeq != f.cursor {
		return false, err // events not yet handled, or not yet stored
	}
	c := f.c
	c.Delivered, c.ParkedVersion = f.cursor, t.Version
	if err := f.d.saver.save(ctx, c); err != nil {
		return false, err
	}
	f.c.Delivered = f.cursor
	return true, nil
}

// handle delivers ev's update, if it has one, and saves the cursor past it.
func (f *follower) handle(ctx context.Context, ev run.Event) error {
	body, err := f.feed.Body(ctx, ev)
	if err != nil {
		return err
	}
	if body == nil {
		f.cursor = ev.Seq
		return nil
	}
	var attempts int
	err = f.holding(ctx, func(ctx context.Context) (err error) {
		attempts, err = f.d.send(f.traced(ctx), f.feed.Target(), body, f.open)
		return err
	})
	if ctx.Err() != nil || claimLost(err) {
		return cmp.Or(err, ctx.Err()) // not delivered: the next holder sends it
	}
	f.cursor = ev.Seq
	if err != nil {
		f.d.log.Warn("push: update given up", "task_id", f.c.TaskID, "config_id", f.c.ID,
			"seq", ev.Seq, "attempts", attempts, "circuit_open", f.open, "err", err)
	}
	f.trip(err)
	if o := f.d.opts.Observe; o != nil {
		o(Delivery{TaskID: f.c.TaskID, ConfigID: f.c.ID, Seq: ev.Seq, EventTime: ev.Time, Sent: time.Now(), Attempts: attempts, Err: err})
	}
	return f.keep(ctx, true)
}

// metaTraceParent is the task metadata key where telemetry stores the W3C
// traceparent of the run's span (telemetry.MetaTraceParent).
const metaTraceParent = "traceparent"

// traced returns ctx carrying the run's trace context, when the task has
// one: each webhook attempt's client span joins the run's trace (else it
// starts a trace of its own), and its traceparent tells the receiver.
func (f *follower) traced(ctx context.Context) context.Context {
	tp, _ := f.task.Metadata[metaTraceParent].(string)
	if tp == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// trip opens the webhook's circuit when an update was given up on a
// failure retries might have cured (the webhook is down, not refusing
// this update), and closes it when an update was taken. An update the
// webhook refused for good (a 4xx) says nothing about the next one.
func (f *follower) trip(err error) {
	switch {
	case err == nil:
		if f.open {
			f.d.log.Info("push: webhook answers again; updates are retried again", "task_id", f.c.TaskID, "config_id", f.c.ID)
		}
		f.open = false
	case retryableDelivery(err) && !f.open:
		f.d.log.Warn("push: webhook down; the next updates get one attempt each until one is taken", "task_id", f.c.TaskID, "config_id", f.c.ID)
		f.open = true
	}
}

// holding runs send while a goroutine renews the claim every renewEvery:
// an attempt may take longer than the claim lasts (a slow webhook, the
// backoff between attempts), and a claim that expired meanwhile would let
// another replica deliver the next updates before this one is taken.
// When the claim is lost, send's context ends and holding returns why.
func (f *follower) holding(ctx context.Context, send func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(f.renewEvery())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := f.keep(ctx, true); err != nil && ctx.Err() == nil {
					cancel(err)
					return
				}
			}
		}
	}()
	err := send(ctx)
	cancel(nil)
	<-renewed // f is the caller's again
	if cause := context.Cause(ctx); claimLost(cause) {
		return cause
	}
	return err
}

// renewEvery is how often an idle or retrying delivery renews its claim.
func (f *follower) renewEvery() time.Duration { return f.d.opts.ClaimTTL / 3 }

// keep saves the cursor (when force) or renews the claim when due.
func (f *follower) keep(ctx context.Context, force bool) error {
	if !force && time.Since(f.saved) < f.renewEvery() {
		return nil
	}
	return f.save(ctx, false)
}

// save records the cursor, and done when delivery is over, and extends
// the claim.
func (f *follower) save(ctx context.Context, done bool) error {
	c := f.c
	c.Delivered, c.Done = f.cursor, done
	if err := f.d.saver.save(ctx, c); err != nil {
		return err
	}
	f.c.Delivered, f.saved = f.cursor, time.Now()
	return nil
}

// handOver saves the cursor and lets the claim expire now, so that the
// next claim round (here or on another replica) resumes the delivery.
func (f *follower) handOver(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handOverTimeout)
	defer cancel()
	c := f.c
	c.Delivered = f.cursor
	if _, err := f.d.st.SavePushDelivery(ctx, c, time.Nanosecond); err != nil && !claimLost(err) {
		f.d.log.Warn("push: handing a delivery over failed; its claim expires instead", "task_id", c.TaskID, "config_id", c.ID, "err", err)
	}
}
