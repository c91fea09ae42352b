package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// errResumeBusy says a parked task has an execution here already.
var errResumeBusy = errors.New("being resumed or canceled already")

// leavingWait bounds how long an answer waits for the attempt that parked
// its task to leave (see awaitLeaving).
const leavingWait = time.Second

// continueTask answers an input-required task: the message resumes the run
// from its latest checkpoint in a new attempt.
func (r *Runtime) continueTask(ctx context.Context, a *Agent, req SendRequest, msg run.Message) (Submission, error) {
	t, err := r.st.GetTask(ctx, req.TaskID)
	if err != nil {
		return Submission{}, err
	}
	if err := r.checkContinue(ctx, a, req, msg, t); err != nil || !t.State.Interrupted() {
		if err == nil { // a resend of the answer that resumed the task: a retry
			return r.resubmission(ctx, a, req, msg, t.ID)
		}
		return Submission{}, err
	}
	x, err := r.admitResume(ctx, a, t, msg)
	if errors.Is(err, errResumeBusy) && r.awaitLeaving(ctx, t.ID) {
		x, err = r.admitResume(ctx, a, t, msg)
	}
	if err != nil {
		return Submission{}, err
	}
	defer r.submitting.Done()
	claim := r.leaseClaim()
	first, err := r.submitCommit(ctx, x.log, store.Change{
		Idempotency: &x.key,
		TaskID:      t.ID,
		UpdateTask:  &x.task,
		Messages:    x.user[:],
		Lease:       claim,
	}, runStartEvent(RunStartData{ContextID: t.ContextID, AgentID: a.ID, Attempt: x.task.Attempt, Resumed: engine.SignalInput}),
		statusEvent(StatusData{State: run.StateWorking}))
	if err != nil {
		return r.abandonSubmission(ctx, a, req, x, err)
	}
	x.task.Version++
	x.holdLease(claim.Granted)
	close(x.created)
	resumed := x.task
	r.launch(x)
	return Submission{Task: resumed, StartSeq: first - 1}, nil
}

// checkContinue checks that a message to task t may go to it: same context
// and agent, and t waits for input. For a task that does not wait, a nil
// error means msg is the answer that resumed it (a retry).
func (r *Runtime) checkContinue(ctx context.Context, a *Agent, req SendRequest, msg run.Message, t run.Task) error {
	if req.ContextID != "" && req.ContextID != t.ContextID {
		return errdefs.WithField("context_id", errdefs.Validationf("task %s belongs to context %s, not %s", t.ID, t.ContextID, req.ContextID))
	}
	if t.AgentID != a.ID {
		return errdefs.Validationf("task %s belongs to agent %s, not %s", t.ID, t.AgentID, a.ID)
	}
	if t.State.Interrupted() {
		return checkApprovals(t, msg.Message)
	}
	if _, _, found, err := r.userMessage(ctx, t, msg.ID); err != nil || found {
		return err
	}
	if t.State.Terminal() {
		return errdefs.Conflict(errorsJoin(ErrTaskTerminal, "task "+t.ID+" is "+string(t.State)))
	}
	return errdefs.Conflictf("task %s is %s, not waiting for input; wait for it or cancel it", t.ID, t.State)
}

// awaitLeaving waits, briefly, for the execution of task id registered
// here to end, and reports whether it did. The attempt that parked a task
// stores its outcome before it leaves the runtime, so a client that answers
// as soon as it reads input-required (an A2A stream ends on that update)
// can meet it still here; a concurrent resume runs on, and its caller
// gets the conflict after the wait.
func (r *Runtime) awaitLeaving(ctx context.Context, id string) bool {
	r.mu.Lock()
	prev := r.runs[id]
	r.mu.Unlock()
	if prev == nil {
		return true
	}
	timer := time.NewTimer(leavingWait)
	defer timer.Stop()
	select {
	case <-prev.ended:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// admitResume decides under r.mu whether parked task t resumes here with
// msg, and registers the resuming execution: the task must not be resumed
// or canceled already, and its context must be free. On success the caller
// owns one r.submitting count.
func (r *Runtime) admitResume(ctx context.Context, a *Agent, t run.Task, msg run.Message) (*execution, error) {
	l, err := r.logs.Activate(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs[t.ID] != nil || r.canceling[t.ID] {
		r.logs.Release(l) // still active for the execution that owns it
		return nil, errdefs.Conflictf("task %s is %w", t.ID, errResumeBusy)
	}
	if r.draining {
		r.logs.Release(l)
		return nil, errdefs.Public(errdefs.NotAvailable(ErrDraining))
	}
	q := r.contexts[contextKey(tenantOf(t), t.ContextID)]
	if q == nil {
		q = &contextQueue{}
		r.contexts[contextKey(tenantOf(t), t.ContextID)] = q
	}
	if q.active != "" {
		l.Deactivate()
		r.logs.Release(l)
		return nil, errdefs.Conflictf("context %s has a running task %s; task %s can resume when it ends", t.ContextID, q.active, t.ID)
	}
	r.submitting.Add(1)
	q.active = t.ID
	next := t
	next.State, next.Attempt, next.StatusMessage, next.Error = run.StateWorking, t.Attempt+1, nil, nil
	next.CancelRequested = false
	next.UpdatedAt = time.Now().UTC()
	x := r.newExecution(a, next, l, msg.Message, engine.SignalInput)
	x.host.reply = &engine.UserReply{Parts: msg.Parts}
	r.registerLocked(x)
	return x, nil
}

// userMessage finds the message msgID in task t's transcript, and how many
// user messages of t precede it: the nth user message of a task opened its
// first attempt (n = 0) or the nth attempt resumed with input.
func (r *Runtime) userMessage(ctx context.Context, t run.Task, msgID string) (m model.Message, nth int, found bool, err error) {
	q := run.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Limit: 1000}
	for {
		page, err := r.st.ListMessages(ctx, q)
		if err != nil {
			return model.Message{}, 0, false, err
		}
		for _, sm := range page.Messages {
			if sm.ID == msgID {
				return sm.Message, nth, true, nil
			}
			if sm.Role == model.RoleUser {
				nth++
			}
		}
		if page.NextAfter == 0 {
			return model.Message{}, 0, false, nil
		}
		q.After = page.NextAfter
	}
}

// attemptStart is the seq just before the attempt task runID's nth user
// message opened: 0 for the first message, else before the nth run.start
// resumed with input. When that run.start is no longer in the log (pruned)
// it is the log's end: a stream then starts with what happens next.
func (r *Runtime) attemptStart(ctx context.Context, runID string, nth int) (int64, error) {
	if nth == 0 {
		return 0, nil
	}
	var after int64
	for {
		page, err := r.st.ReadEvents(ctx, runID, after, 1000)
		if err != nil {
			return 0, err
		}
		for _, ev := range page.Events {
			if ev.Type != EventRunStart {
				continue
			}
			var d RunStartData
			if json.Unmarshal(ev.Data, &d) == nil && d.Resumed == engine.SignalInput {
				if nth--; nth == 0 {
					return ev.Seq - 1, nil
				}
			}
		}
		if len(page.Events) == 0 {
			return page.LastSeq, nil
		}
		after = page.Events[len(page.Events)-1].Seq
	}
}

// logEnd is the run's last event seq (0 when it cannot be read).
func (r *Runtime) logEnd(ctx context.Context, runID string) int64 {
	page, err := r.st.ReadEvents(ctx, runID, 1<<62, 1)
	if err != nil {
		return 0
	}
	return page.LastSeq
}
