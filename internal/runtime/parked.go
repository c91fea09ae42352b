package runtime

import (
	"context"
	"encoding/json"
	"time"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// A run parked for input has no goroutine and no lease; an answer resumes
// it (continueTask). Two other things may resume it without an answer,
// for engines that ask for it (engine.Capabilities):
//   - a cancel, when the engine HandlesParkedInterrupts or the agent hands
//     off to peers (a peer target's task must be canceled): the run resumes
//     from its latest checkpoint in an attempt opened by run.start
//     resumed "cancel", with the interrupt (user_cancel) already pending
//     on Interrupts, so that the engine's handler runs (a flow says
//     goodbye); the attempt ends canceled (handledCancel);
//   - an expired prompt, when the engine declares PromptDeadlines: the
//     deadline is in the stored status message (the prompt's data part,
//     engine.PromptDeadlineKey), so any replica, after any restart, finds
//     it (promptSweep); the run resumes with engine.SignalTimeout, and
//     AskUser answers the expired prompt with a Timeout error.
// Either way the attempt claims the run's lease and bumps the task's
// version in its first commit, so one replica and one resume win; the
// others get a Conflict.

// resumeParked resumes task t, parked for input, in a new attempt without
// an answer: signal (ResumedByCancel or engine.SignalTimeout) says why.
// The task it returns is working.
func (r *Runtime) resumeParked(ctx context.Context, a *Agent, t run.Task, signal string) (run.Task, error) {
	if !t.State.Interrupted() {
		return run.Task{}, errdefs.Conflictf("task %s is %s, not waiting for input", t.ID, t.State)
	}
	return r.resumeFrom(ctx, a, t, signal, nil)
}

// resumeFrom resumes task t from its latest checkpoint in a new attempt:
// signal says why. prep, when set, readies the attempt before it is
// launched and returns events its first commit writes after run.start
// (a signal's).
func (r *Runtime) resumeFrom(ctx context.Context, a *Agent, t run.Task, signal string, prep func(*execution) []runlog.Entry) (run.Task, error) {
	l, err := r.logs.Activate(ctx, t.ID)
	if err != nil {
		return run.Task{}, err
	}
	r.mu.Lock()
	q := r.contexts[contextKey(tenantOf(t), t.ContextID)]
	if busy := r.resumeBlockedLocked(t, signal, q); busy != "" {
		r.mu.Unlock()
		l.Deactivate()
		r.logs.Release(l)
		return run.Task{}, errdefs.Conflictf("resume task %s (%s): %s", t.ID, signal, busy)
	}
	if q == nil {
		q = &contextQueue{}
		r.contexts[contextKey(tenantOf(t), t.ContextID)] = q
	}
	q.active = t.ID
	next := resumedTask(t, signal)
	x := r.newExecution(a, next, l, userMessageOf(ctx, r, t), signal)
	switch signal {
	case ResumedByCancel:
		x.interrupt(engine.CauseUserCancel, "canceled by the user")
	case engine.SignalTimeout:
		x.host.expired = true
	}
	evs := []runlog.Entry{runStartEvent(RunStartData{ContextID: t.ContextID, AgentID: a.ID, Attempt: next.Attempt, Resumed: signal})}
	if prep != nil {
		evs = append(evs, prep(x)...)
	}
	r.registerLocked(x)
	r.mu.Unlock()

	claim := r.leaseClaim()
	_, err = r.commit(ctx, l, store.Change{TaskID: t.ID, UpdateTask: &x.task, Lease: claim},
		append(evs, statusEvent(StatusData{State: run.StateWorking}))...)
	if err != nil {
		x.createErr = err
		close(x.created)
		r.forget(x)
		return run.Task{}, err
	}
	x.task.Version++
	x.holdLease(claim.Granted)
	close(x.created)
	resumed := x.task // x.task belongs to the execution's goroutine once launched
	r.launch(x)
	return resumed, nil
}

// resumeBlockedLocked says why task t cannot be resumed (for signal) now,
// or "" when it can; q is its context's queue, if any. r.mu is held.
func (r *Runtime) resumeBlockedLocked(t run.Task, signal string, q *contextQueue) string {
	switch {
	case r.runs[t.ID] != nil:
		return "task " + t.ID + " is being resumed already"
	case signal != ResumedByCancel && r.canceling[t.ID]:
		return "task " + t.ID + " is being canceled"
	case r.draining:
		return "the server is shutting down"
	case q != nil && q.active != "":
		return "context " + t.ContextID + " has a running task " + q.active
	}
	return ""
}

// resumedTask is parked task t as its next attempt, resumed by signal,
// starts it.
func resumedTask(t run.Task, signal string) run.Task {
	next := t
	next.State, next.Attempt, next.StatusMessage, next.Error = run.StateWorking, t.Attempt+1, nil, nil
	// A cancel stays recorded for the attempt that handles it: should this
	// replica die before it ends, the replica that recovers the run sees
	// the request at its first lease renewal and interrupts it again.
	next.CancelRequested = signal == ResumedByCancel
	next.UpdatedAt = time.Now().UTC()
	return next
}

// cancelParked cancels a parked task through its engine when the engine
// handles interrupts while parked; handled is false when the task is left
// to cancelIdle: another engine, or the context busy with another task (a
// resume would have to wait, and a cancel does not). Callers hold the
// task's canceling mark.
func (r *Runtime) cancelParked(ctx context.Context, t run.Task) (_ run.Task, handled bool, err error) {
	a, err := r.Agent(t.AgentID)
	if !t.State.Interrupted() || err != nil || !engine.CapabilitiesOf(a.Engine).HandlesParkedInterrupts && !a.hasPeerHandoffs() {
		return t, false, nil
	}
	next, err := r.resumeParked(ctx, a, t, ResumedByCancel)
	if errdefs.IsConflict(err) {
		r.log.Debug("parked run canceled without its engine", "run_id", t.ID, "err", err)
		return t, false, nil
	}
	return next, err == nil, err
}

// handledCancel is the outcome of an attempt that completed although it
// was canceled, in an engine that handles interrupts (a flow whose
// interrupt handler said goodbye and ended): the run is canceled — the
// user asked for that, and an A2A cancel must end so — with the engine's
// last message as the reason, which the transcript holds already.
func handledCancel(res *agent.Result, note string) outcome {
	msg := model.NewText(model.RoleAssistant, note)
	if res.LastBoard != nil {
		msgs := res.LastBoard.ChannelView(engine.MainChannel)
		for i := len(msgs) - 1; i >= 0; i-- {
			if m := msgs[i]; m.Role == model.RoleAssistant && m.Text() != "" {
				msg = model.NewText(model.RoleAssistant, m.Text())
				break
			}
		}
	}
	return outcome{state: run.StateCanceled, status: &msg, keep: res.Committed, said: true}
}

// promptDeadline is when the prompt that parked task t expires: the
// engine.PromptDeadlineKey member (RFC 3339) of a data part of its status
// message. ok is false when the prompt has none.
func promptDeadline(t run.Task) (deadline time.Time, ok bool) {
	if !t.State.Interrupted() || t.StatusMessage == nil {
		return time.Time{}, false
	}
	for _, p := range t.StatusMessage.Parts {
		if p.Type != model.PartData {
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(p.Data, &obj) != nil {
			continue
		}
		var s string
		if json.Unmarshal(obj[engine.PromptDeadlineKey], &s) != nil {
			continue
		}
		if d, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return d, true
		}
	}
	return time.Time{}, false
}

// promptSweep finds parked runs whose prompt expired and resumes them
// with engine.SignalTimeout. It belongs to the sweep goroutine (lease.go),
// which calls round once per sweep.
//
// Each round reads one page (at most promptPage tasks) of input-required
// tasks per agent that declares PromptDeadlines, continuing where the
// previous round stopped and starting again at the newest after the last
// page: the work per round is bounded, and a prompt is seen within
// (parked tasks / promptPage) rounds of its deadline. The sweep lists
// the waiting tasks of every tenant (store.ListTasksOfAllTenants) and
// resumes each in its own tenant's scope.
type promptSweep struct {
	r       *Runtime
	cursors map[string]string // agent id → where its next page starts
}

// promptPage bounds the tasks one round reads per agent.
const promptPage = 100

func newPromptSweep(r *Runtime) *promptSweep {
	return &promptSweep{r: r, cursors: map[string]string{}}
}

// round resumes the expired prompts of one page per agent.
func (s *promptSweep) round(ctx context.Context) {
	r := s.r
	now := time.Now()
	for _, a := range r.Agents() {
		if !engine.CapabilitiesOf(a.Engine).PromptDeadlines {
			continue
		}
		page, err := r.st.ListTasksOfAllTenants(ctx, run.TaskQuery{AgentID: a.ID, States: []run.TaskState{run.StateInputRequired},
			Cursor: s.cursors[a.ID], Limit: promptPage})
		if err != nil {
			r.noteStoreError(err)
			r.log.Warn("sweep of expired prompts failed", "agent_id", a.ID, "err", err)
			continue
		}
		s.cursors[a.ID] = page.NextCursor
		for _, t := range page.Tasks {
			d, ok := promptDeadline(t)
			if !ok || now.Before(d) {
				continue
			}
			if _, err := r.resumeParked(run.WithTenant(ctx, tenantOf(t)), a, t, engine.SignalTimeout); errdefs.IsConflict(err) {
				// Answered, canceled or resumed meanwhile, here or elsewhere.
				r.log.Debug("expired prompt left alone", "run_id", t.ID, "tenant", tenantOf(t), "err", err)
			} else if err != nil {
				r.log.Warn("resume of an expired prompt failed", "run_id", t.ID, "tenant", tenantOf(t), "err", err)
			} else {
				r.log.Info("prompt expired; run resumed", "run_id", t.ID, "tenant", tenantOf(t), "deadline", d)
			}
		}
	}
}
