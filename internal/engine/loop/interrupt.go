package loop

import (
	"context"
	"errors"
	"sync"

	"agentd/internal/engine"
)

// interruptible is the context model streams and tools run under: ctx,
// also cancelled — with engine.Interrupted(intr) as its cause — when an
// interrupt arrives on the host's channel, so that an interrupt stops them
// mid-stream.
//
// It watches the channel only as closely as its users look. Err polls it,
// so code that checks Err between steps (the loop itself, a provider
// between chunks) sees an interrupt at once without any goroutine. Done
// starts, on its first call, a goroutine that waits for an interrupt,
// since whoever asks for Done may block on it (Stream.Next waiting for the
// network, a tool, a derived context). A run whose provider and tools
// never block on the context never starts that goroutine.
//
// A nil channel never fires and a closed one ends the watch: neither
// needs the goroutine. stop cancels the context and waits for the
// goroutine, which belongs to the Execute call that made the context.
type interruptible struct {
	context.Context // cancelled by cancel, whose cause is the interrupt
	cancel          context.CancelCauseFunc
	ch              <-chan engine.Interrupt

	start   sync.Once
	watched chan struct{} // closed when the goroutine returns; nil if none started
}

func watchInterrupts(ctx context.Context, ch <-chan engine.Interrupt) *interruptible {
	w := &interruptible{ch: ch}
	w.Context, w.cancel = context.WithCancelCause(ctx)
	return w
}

// Done starts the watching goroutine, then returns the context's channel.
func (w *interruptible) Done() <-chan struct{} {
	w.start.Do(w.watch)
	return w.Context.Done()
}

// Err takes an interrupt waiting on the channel, if any, then reports
// the context's error.
func (w *interruptible) Err() error {
	w.poll()
	return w.Context.Err()
}

// poll cancels the context for an interrupt waiting on the channel. A
// cancelled context takes no more interrupts, as the goroutine would not.
func (w *interruptible) poll() {
	if w.ch == nil || w.Context.Err() != nil {
		return
	}
	select {
	case intr, ok := <-w.ch:
		if ok {
			w.cancel(engine.Interrupted(intr))
		}
	default:
	}
}

// watch starts the goroutine that cancels the context for an interrupt;
// it runs under start.
func (w *interruptible) watch() {
	if w.ch == nil {
		return
	}
	w.watched = make(chan struct{})
	go func() {
		defer close(w.watched)
		select {
		case <-w.Context.Done():
		case intr, ok := <-w.ch:
			if ok {
				w.cancel(engine.Interrupted(intr))
			}
		}
	}()
}

// stop cancels the context and waits for the watching goroutine; after
// it, Done starts none.
func (w *interruptible) stop() {
	w.cancel(nil)
	w.start.Do(func() {})
	if w.watched != nil {
		<-w.watched
	}
}

// interrupt returns the interrupt that cancelled the context, if one did,
// after taking any interrupt waiting on the channel.
func (w *interruptible) interrupt() (engine.Interrupt, bool) {
	if w.Err() == nil {
		return engine.Interrupt{}, false
	}
	var ie engine.InterruptedError
	if errors.As(context.Cause(w), &ie) {
		return ie.Interrupt, true
	}
	return engine.Interrupt{}, false
}
