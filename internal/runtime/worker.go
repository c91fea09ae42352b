package runtime

import (
	"time"
)

// launch runs x in the background, owned by the runtime: on an idle
// worker when there is one, else on a new one.
func (r *Runtime) launch(x *execution) {
	r.mu.Lock()
	x.launched = true
	r.mu.Unlock()
	select {
	case r.handoff <- x:
		return
	default:
	}
	r.wg.Add(1)
	go r.worker(x)
}

// workerIdle is how long a worker waits for the next execution before it
// exits.
const workerIdle = 10 * time.Second

// worker runs x, then the executions handed to it, until it has been idle
// for workerIdle or the runtime stops. Reusing goroutines matters because
// a run's call stack is deep (agent, engine, model, encoders): a fresh
// goroutine grows its stack by copying several times per run, a reused one
// has grown already.
func (r *Runtime) worker(x *execution) {
	defer r.wg.Done()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		x.run()
		r.ended(x)
		idle.Reset(workerIdle)
		select {
		case x = <-r.handoff:
		case <-idle.C:
			return
		case <-r.ctx.Done():
			return
		}
	}
}
