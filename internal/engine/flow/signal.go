package flow

import (
	"context"
	"fmt"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// signalOf names the flow signal an interrupt raises: a drain is
// shutdown, anything else (a cancel, a barge-in) interrupt.
func signalOf(intr engine.Interrupt) string {
	if intr.Cause == engine.CauseHostShutdown {
		return SignalShutdown
	}
	return SignalInterrupt
}

// poll takes an interrupt waiting on the host's channel, if any.
func (x *execution) poll() (engine.Interrupt, bool) {
	if x.intr == nil {
		return engine.Interrupt{}, false
	}
	select {
	case intr, ok := <-x.intr:
		if !ok {
			x.intr = nil // closed: no interrupt will come
			return engine.Interrupt{}, false
		}
		return intr, true
	default:
		return engine.Interrupt{}, false
	}
}

// during runs fn under a context that an interrupt cancels, and returns
// the interrupt if one arrived. The watching goroutine has returned when
// during does.
func (x *execution) during(fn func(ctx context.Context)) (engine.Interrupt, bool) {
	if x.intr == nil {
		fn(x.ctx)
		return engine.Interrupt{}, false
	}
	ctx, cancel := context.WithCancel(x.ctx)
	defer cancel()
	var (
		got, closed bool
		intr        engine.Interrupt
	)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case i, ok := <-x.intr:
			if ok {
				intr, got = i, true
				cancel()
			} else {
				closed = true
			}
		case <-ctx.Done():
		}
	}()
	fn(ctx)
	cancel()
	<-watched
	if closed {
		x.intr = nil
	}
	return intr, got
}

// handler finds the node that handles signal name at n: n's on_signal
// (on_timeout, on_interrupt), else the entry node's on_signal_default.
func (x *execution) handler(n *node, name string) string {
	if to := n.signals[name]; to != "" {
		return to
	}
	return x.f.signalDefaults[name]
}

// signal routes signal sig raised at node n to its handler, which the run
// continues at. A signal nobody handles ends the run: an interrupt or
// shutdown with engine.Interrupted (a drain then resumes the run from its
// last checkpoint, elsewhere), a timeout with a Timeout error. A run
// already following a cancel's handler does not handle a second signal.
func (x *execution) signal(n *node, sig *raised) error {
	to := x.handler(n, sig.name)
	if to == "" || (x.st.Signal != nil && sig.intr != nil) {
		err := x.unhandled(n, sig)
		x.stepError(n, err)
		if sig.intr == nil {
			return x.finish(err)
		}
		return err
	}
	x.stepComplete(n, nodeDetail{Signal: sig.name, To: to})
	if sig.intr != nil {
		x.st.Signal = &handled{Name: sig.name, Cause: string(sig.intr.Cause), Detail: sig.intr.Detail}
	}
	x.st.Sys["signal"] = sig.name
	x.st.enter(to)
	return x.checkpoint()
}

func (x *execution) unhandled(n *node, sig *raised) error {
	switch {
	case sig.intr == nil:
		return errdefs.Timeoutf("flow %s: node %q: no answer within %s and no timeout handler (on_timeout, on_signal.timeout)", x.f.name, n.id, n.timeout)
	case sig.name == SignalShutdown:
		return engine.Interrupted(*sig.intr)
	}
	return fmt.Errorf("flow %s: node %q: unhandled signal %q: %w", x.f.name, n.id, sig.name, engine.Interrupted(*sig.intr))
}

// followingCancel returns the interrupt whose handler the run follows,
// if it was a cancel: such a run cannot stop for input any more. A
// drain's handler may ask: the run parks, and resumes elsewhere.
func (x *execution) followingCancel() (engine.Interrupt, bool) {
	h := x.st.Signal
	if h == nil || h.Cause == "" || h.Cause == string(engine.CauseHostShutdown) {
		return engine.Interrupt{}, false
	}
	return engine.Interrupt{Cause: engine.Cause(h.Cause), Detail: h.Detail}, true
}
