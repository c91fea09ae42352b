package remote

import (
	"context"

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
