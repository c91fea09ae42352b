package loop

import (
	"context"
	"errors"

	"agentd/internal/engine"
)

// watchInterrupts returns a context derived from ctx that is cancelled,
// with engine.Interrupted(intr) as its cause, when an interrupt arrives on
// ch. Model streams and tools run under it, so an interrupt stops them
// mid-stream without the engine polling; Stream.Next blocks, so polling
// between chunks would not be enough.
//
// stop cancels the context and waits for the watching goroutine, which
// belongs to the Execute call that started it. A nil channel never fires
// and needs no goroutine; a closed one ends the watch.
func watchInterrupts(ctx context.Context, ch <-chan engine.Interrupt) (work context.Context, stop func()) {
	work, cancel := context.WithCancelCause(ctx)
	if ch == nil {
		return work, func() { cancel(nil) }
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-work.Done():
		case intr, ok := <-ch:
			if ok {
				cancel(engine.Interrupted(intr))
			}
		}
	}()
	return work, func() {
		cancel(nil)
		<-done
	}
}

// interruptOf returns the interrupt that cancelled work, if one did.
func interruptOf(work context.Context) (engine.Interrupt, bool) {
	var ie engine.InterruptedError
	if errors.As(context.Cause(work), &ie) {
		return ie.Interrupt, true
	}
	return engine.Interrupt{}, false
}
