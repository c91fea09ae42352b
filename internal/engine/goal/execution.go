package goal

import (
	"context"
	"time"

	"agentd/internal/engine"
)

// execution is one Execute call. It runs on Execute's goroutine but for
// the interrupt watcher of a planner call (watchInterrupts), which it
// stops and waits for before going on.
type execution struct {
	e         *Engine
	ctx       context.Context
	run       engine.Run
	host      engine.Host
	board     *engine.Board
	st        *state
	startedAt time.Time
	actor     string
}

// execute runs the phases the run has not finished: planning, approval,
// running.
func (x *execution) execute() error {
	if len(x.st.Plan) == 0 {
		if err := x.plan(); err != nil {
			return err
		}
	}
	if x.st.Phase == phaseApproval {
		if err := x.approve(); err != nil {
			return err
		}
	}
	return x.runPlan()
}

// stopped returns the interrupt or cancellation that ends the run now,
// without waiting.
func (x *execution) stopped() error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	select {
	case intr, ok := <-x.host.Interrupts():
		if ok {
			return engine.Interrupted(intr)
		}
	default:
	}
	return nil
}

// watchInterrupts runs f under a context that an interrupt of the host
// cancels, and returns the interrupt when one came, else f's error.
func (x *execution) watchInterrupts(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(x.ctx)
	var intr *engine.Interrupt
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case i, ok := <-x.host.Interrupts():
			if ok {
				intr = &i
				cancel()
			}
		case <-ctx.Done():
		}
	}()
	err := f(ctx)
	cancel()
	<-done
	if intr != nil {
		return engine.Interrupted(*intr)
	}
	if err != nil && x.ctx.Err() != nil {
		return x.ctx.Err()
	}
	return err
}

// publish hands ev to the host; a publish error is not the run's.
func (x *execution) publish(ev engine.Event) {
	_ = x.host.Publish(x.ctx, ev)
}
