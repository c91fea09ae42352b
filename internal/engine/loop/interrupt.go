package loop

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"agentd/internal/engine"
)

// interruptible is the context model streams and tools run under: parent
// (the Execute context), also cancelled — with engine.Interrupted(intr) as its
// cause — when an interrupt arrives on the host's channel, so that an
// interrupt stops them mid-stream.
//
// It watches the channel only as closely as its users look. Err polls it,
// so code that checks Err between steps (the loop itself, a provider
// between chunks) sees an interrupt at once. Done starts, on its first
// call, a goroutine that waits for an interrupt, since whoever asks for
// Done may block on it (Stream.Next waiting for the network, a tool, a
// derived context). Until an interrupt arrives or Done is called it is
// the parent context itself, with no cancel context of its own: a run
// whose provider and tools never block on it costs no goroutine and no
// registration with the parent.
//
// A nil channel never fires and a closed one ends the watch. stop cancels
// the context and waits for the goroutine, which belongs to the Execute
// call that made the context; Done after stop returns a closed channel.
type interruptible struct {
	parent context.Context
	ch     <-chan engine.Interrupt

	// inner and cancel are made on demand, once; made says they are set.
	makeOnce sync.Once
	made     atomic.Bool
	inner    context.Context
	cancel   context.CancelCauseFunc

	watchOnce sync.Once
	watched   chan struct{} // closed when the goroutine returns; nil if none started
	stopped   atomic.Bool
}

var _ context.Context = (*interruptible)(nil)

// current is the context that answers for w: the parent until the cancel
// context is made.
func (w *interruptible) current() context.Context {
	if w.made.Load() {
		return w.inner
	}
	return w.parent
}

func (w *interruptible) make() {
	w.makeOnce.Do(func() {
		w.inner, w.cancel = context.WithCancelCause(w.parent)
		w.made.Store(true)
	})
}

// Deadline is the parent's.
func (w *interruptible) Deadline() (time.Time, bool) { return w.parent.Deadline() }

// Value is the current context's, so context.Cause reports the interrupt.
func (w *interruptible) Value(key any) any { return w.current().Value(key) }

// Err takes an interrupt waiting on the channel, if any, then reports the
// context's error.
func (w *interruptible) Err() error {
	w.poll()
	return w.current().Err()
}

// Done starts the watching goroutine, then returns the context's channel.
func (w *interruptible) Done() <-chan struct{} {
	w.watchOnce.Do(w.watch)
	w.make()
	if w.stopped.Load() {
		w.cancel(nil)
	}
	return w.inner.Done()
}

// poll cancels the context for an interrupt waiting on the channel. A
// cancelled context takes no more interrupts, as the goroutine would not.
func (w *interruptible) poll() {
	if w.ch == nil || w.current().Err() != nil {
		return
	}
	select {
	case intr, ok := <-w.ch:
		if ok {
			w.interruptWith(intr)
		}
	default:
	}
}

func (w *interruptible) interruptWith(intr engine.Interrupt) {
	w.make()
	w.cancel(engine.Interrupted(intr))
}

// watch makes the cancel context and starts the goroutine that cancels it
// for an interrupt; it runs under watchOnce.
func (w *interruptible) watch() {
	w.make()
	if w.ch == nil {
		return
	}
	w.watched = make(chan struct{})
	go func() {
		defer close(w.watched)
		select {
		case <-w.inner.Done():
		case intr, ok := <-w.ch:
			if ok {
				w.interruptWith(intr)
			}
		}
	}()
}

// stop cancels the context and waits for the watching goroutine; after
// it, Done starts none.
func (w *interruptible) stop() {
	w.stopped.Store(true)
	w.watchOnce.Do(func() {})
	if w.made.Load() {
		w.cancel(nil)
	}
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
