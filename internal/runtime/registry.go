package runtime

import (
	"context"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// newExecution makes an attempt of task t with the user message msg that
// started it.
func (r *Runtime) newExecution(a *Agent, t run.Task, l *runlog.Log, msg model.Message, resume string) *execution {
	a = r.agentFor(a, t) // the assistant's configuration, when t names one
	tenant := tenantOf(t)
	// The attempt's context is not a child of the runtime's: a child would
	// cost a locked map insert and delete in the parent per run. The
	// runtime cancels what it registered when it stops (registerLocked).
	bg := context.Background()
	if tenant != run.DefaultTenant { // the store assumes it otherwise
		bg = run.WithTenant(bg, tenant)
	}
	// Tools name the run's conversation and caller from here (a memory
	// namespace's {context} and {user}).
	bg = run.WithCurrent(bg, run.Current{TaskID: t.ID, ContextID: t.ContextID, AgentID: t.AgentID, Metadata: t.Metadata})
	ctx, cancel := context.WithCancel(bg)
	x := &execution{
		r: r, runID: t.ID, contextID: t.ContextID, tenant: tenant, agent: a, log: l, task: t, resume: resume,
		user:       [1]run.Message{{ContextID: t.ContextID, TaskID: t.ID, Message: msg}},
		key:        store.IdempotencyKey{ContextID: t.ContextID, MessageID: msg.ID},
		ctx:        ctx,
		bg:         bg,
		hardCancel: cancel,
		interrupts: make(chan engine.Interrupt, 1),
		ended:      make(chan struct{}),
		created:    make(chan struct{}),
	}
	x.host = host{x: x}
	x.keepCheckpoints = keepsCheckpoints(t.Metadata)
	l.SetTenant(tenant)
	return x
}

// registerLocked makes x the runtime's execution of its run; once the
// runtime has stopped, x is canceled at once. Callers hold r.mu.
func (r *Runtime) registerLocked(x *execution) {
	r.runs[x.runID] = x
	if r.ctx.Err() != nil {
		x.hardCancel()
	}
}

// ended releases x's context slot, wakes blocking callers and starts the
// next queued task of the context.
func (r *Runtime) ended(x *execution) {
	x.mu.Lock()
	cancelled := x.cancelCause == engine.CauseUserCancel
	x.mu.Unlock()
	parked := x.task.State.Interrupted()
	r.mu.Lock()
	delete(r.runs, x.runID)
	next := r.advanceLocked(x)
	var handover *execution
	if next != nil && r.draining {
		// Draining: queued work is not started here; it is handed over.
		r.dequeueLocked(next)
		handover, next = next, nil
	}
	cancelParked := parked && (cancelled || x.task.CancelRequested) && !r.canceling[x.runID]
	if cancelParked {
		r.canceling[x.runID] = true
	}
	r.mu.Unlock()
	if handover != nil {
		handover.release(true)
		r.closeEnded(handover)
	}
	if cancelParked {
		// A cancel arrived while the run was parking: the task waits for
		// input now, so cancel it as such.
		if _, err := r.cancelIdle(x.bg, x.task); err != nil {
			r.log.Warn("cancel of a parked run failed", "run_id", x.runID, "err", err)
		}
		r.mu.Lock()
		delete(r.canceling, x.runID)
		r.mu.Unlock()
	}
	x.log.Deactivate()
	r.logs.Release(x.log)
	r.closeEnded(x)
	if next != nil && r.ctx.Err() == nil {
		r.launch(next)
	}
}

// advanceLocked takes x out of its context's queue or active slot and, when
// the slot frees up, returns the next queued execution, now active. Callers
// hold r.mu and launch the returned execution.
func (r *Runtime) advanceLocked(x *execution) *execution {
	q := r.contexts[contextKey(x.tenant, x.contextID)]
	if q == nil {
		return nil
	}
	for i, y := range q.queue {
		if y == x {
			q.queue = append(q.queue[:i], q.queue[i+1:]...)
			break
		}
	}
	var next *execution
	if q.active == x.runID {
		q.active = ""
		for len(q.queue) > 0 && next == nil {
			next, q.queue = q.queue[0], q.queue[1:]
			if next.ctx.Err() != nil {
				next = nil // canceled while queued
			}
		}
		if next != nil {
			q.active = next.runID
		}
	}
	if q.active == "" && len(q.queue) == 0 {
		delete(r.contexts, contextKey(x.tenant, x.contextID))
	}
	return next
}

// forget undoes the registration of an execution that never started.
func (r *Runtime) forget(x *execution) {
	r.mu.Lock()
	delete(r.runs, x.runID)
	next := r.advanceLocked(x)
	r.mu.Unlock()
	x.log.Deactivate()
	x.hardCancel()
	r.logs.Release(x.log)
	r.closeEnded(x)
	if next != nil && r.ctx.Err() == nil {
		r.launch(next)
	}
}
