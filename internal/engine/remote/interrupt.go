package remote

import (
	"context"
	"time"

	"agentd/internal/engine"
)

// watchInterrupts returns a context for the attempt's calls to the peer
// that is canceled when the host sends an interrupt, and stop, which ends
// the watcher, waits for it and returns the interrupt received, if any.
// The watcher goroutine is owned by the attempt: stop is always called.
func (x *attempt) watchInterrupts() (context.Context, func() *engine.Interrupt) {
	ctx, cancel := context.WithCancel(x.ctx)
	var got *engine.Interrupt
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case intr, ok := <-x.host.Interrupts():
			if ok {
				got = &intr
				// A cancel must reach the peer task, so its id must be
				// known first: stopping the stream before the peer's
				// first event would leave the task running there.
				if intr.Cause == engine.CauseUserCancel {
					x.awaitKnown(ctx)
				}
				cancel()
			}
		case <-ctx.Done():
		}
	}()
	return ctx, func() *engine.Interrupt {
		cancel()
		<-done
		return got
	}
}

// awaitKnown waits, for at most the peer timeout, until the peer task's id
// is known (or the attempt ends).
func (x *attempt) awaitKnown(ctx context.Context) {
	t := time.NewTimer(x.e.cfg.Timeout)
	defer t.Stop()
	select {
	case <-x.known:
	case <-ctx.Done():
	case <-t.C:
	}
}
