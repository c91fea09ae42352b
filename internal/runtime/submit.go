package runtime

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// Errors the protocol faces map to their own codes.
var (
	// ErrTaskTerminal: the task has ended and accepts no more messages.
	ErrTaskTerminal = errors.New("task is in a terminal state")
	// ErrNotCancelable: the task ended in another state than canceled.
	ErrNotCancelable = errors.New("task can no longer be canceled")
	// ErrDraining: the server is shutting down and accepts no new work.
	ErrDraining = errors.New("server is shutting down")
)

// SendRequest is a message to an agent: it starts a task, or continues one
// that waits for input.
type SendRequest struct {
	AgentID string
	// AssistantID, when set, names a stored assistant of AgentID (or, with
	// AgentID empty, of its own agent): the run uses the assistant's
	// latest version (assistants_run.go). Ignored with TaskID.
	AssistantID string
	// ContextID places the message in a conversation; empty starts a new
	// one (or is inferred from TaskID).
	ContextID string
	// TaskID continues that task; it must be waiting for input.
	TaskID string
	// Message is the user's message; its ID, when the client chose one, is
	// the idempotency key within the context.
	Message  model.Message
	Metadata map[string]any
	// Await is how the caller takes a new task's answer: one it awaits on
	// this request (a blocking send, a stream) may let a new context's
	// task be created by the run's first write (create.go).
	Await Await
	// RunID, when set, is the new task's id, chosen by the client (an
	// AG-UI runId): a task with that id in the tenant already is a
	// Conflict. Empty lets the runtime choose; ignored with TaskID.
	RunID string
	// Multitask, when set, overrides the agent's policy for this message
	// should its context be busy (the Agent Protocol's multitask_strategy).
	Multitask MultitaskPolicy
}

// Submission is what Send did.
type Submission struct {
	Task run.Task
	// Duplicate is true when the message had been submitted before; Task is
	// the task it went to (as it is now), and nothing new was started.
	Duplicate bool
	// StartSeq is the event seq just before the attempt this message opened
	// (0 for a new task), also for a duplicate: a stream of the submission
	// starts after it and so replays what a retried stream missed.
	StartSeq int64
	// create, when set, is the task's deferred create, stored at the
	// run's first write (Durable).
	create *runlog.Create
}

// contextQueue tracks the running task of a context on this replica and the
// tasks queued behind it.
type contextQueue struct {
	active string
	queue  []*execution
}

// Send validates and records the message, then starts (or queues, or
// resumes) the run in the background: the task and its first events are
// durable before Send returns, and the run does not depend on ctx beyond
// that (invariant 5). A new task that starts at once is created working (its
// status events still say submitted, then working); a queued one is created
// submitted.
func (r *Runtime) Send(ctx context.Context, req SendRequest) (Submission, error) {
	req, err := r.withAssistant(ctx, req)
	if err != nil {
		return Submission{}, err
	}
	a, msg, err := r.checkSend(req)
	if err != nil {
		return Submission{}, err
	}
	if req.TaskID != "" {
		return r.continueTask(ctx, a, req, msg)
	}
	x := r.newTask(ctx, a, req, msg)
	x.multitask = req.Multitask
	adm, err := r.admit(ctx, x, msg.ID)
	if err != nil || adm.dup != nil {
		if adm.dup != nil {
			return r.resubmission(ctx, a, req, msg, adm.dup.runID)
		}
		return Submission{}, err
	}
	defer r.submitting.Done()
	if err := r.create(ctx, x, adm.start, req); err != nil {
		return r.abandonSubmission(ctx, a, req, x, err)
	}
	created, create := x.task, x.create // x's fields belong to the execution's goroutine once launched
	close(x.created)
	if adm.start {
		r.launch(x)
	} else if adm.displaced != nil {
		adm.displaced.interrupt(engine.CauseUserInput, "superseded by task "+x.runID)
	}
	return Submission{Task: created, create: create}, nil
}

// checkSend validates a message to an agent: the agent, the message, its
// content types and the client's context id. A draining runtime takes none.
func (r *Runtime) checkSend(req SendRequest) (*Agent, run.Message, error) {
	a, err := r.Agent(req.AgentID)
	if err != nil {
		return nil, run.Message{}, err
	}
	msg, err := normaliseUserMessage(req.Message)
	if err != nil {
		return nil, run.Message{}, err
	}
	if err := checkInputModes(a, msg.Message); err != nil {
		return nil, run.Message{}, err
	}
	r.mu.Lock()
	draining := r.draining
	r.mu.Unlock()
	if draining {
		return nil, run.Message{}, errdefs.Public(errdefs.NotAvailable(ErrDraining))
	}
	if req.ContextID != "" {
		if err := checkClientID(req.ContextID); err != nil {
			return nil, run.Message{}, errdefs.WithField("context_id", err)
		}
	}
	if req.RunID != "" {
		if err := checkClientID(req.RunID); err != nil {
			return nil, run.Message{}, errdefs.WithField("run_id", err)
		}
	}
	return a, msg, nil
}

// newTask is the execution of a new task for msg, in the client's context
// or a new one; its log is made but not open yet (admit opens it).
func (r *Runtime) newTask(ctx context.Context, a *Agent, req SendRequest, msg run.Message) *execution {
	contextID := req.ContextID
	if contextID == "" {
		contextID = newID()
	}
	now := time.Now().UTC()
	taskID := cmp.Or(req.RunID, newID())
	x := r.newExecution(a, run.Task{
		ID: taskID, ContextID: contextID, AgentID: a.ID, State: run.StateSubmitted, Tenant: run.TenantFrom(ctx),
		Metadata:  r.observedCreate(ctx, RunInfo{RunID: taskID, ContextID: contextID, AgentID: a.ID}, req.Metadata),
		CreatedAt: now, UpdatedAt: now,
	}, r.logs.New(taskID), msg.Message, "")
	x.createdTask, x.freshContext = true, req.ContextID == "" && storedAsIs(msg.Message)
	return x
}

// admission is admit's decision about a new task.
type admission struct {
	// start: the context is free and the task starts at once; otherwise
	// it is queued behind the context's running task.
	start bool
	// displaced is the running task a multitask "interrupt" agent's new
	// task supersedes.
	displaced *execution
	// dup is the execution the same message already opened here: the
	// message is a retry, answered by resubmission.
	dup *execution
}

// admit decides under r.mu whether new task x starts, is queued or is
// refused, so that two racing messages to a context cannot both start, and
// registers it. On success (no error, no dup) the caller owns one
// r.submitting count, which Shutdown waits for.
func (r *Runtime) admit(ctx context.Context, x *execution, msgID string) (admission, error) {
	r.mu.Lock()
	q := r.contexts[contextKey(x.tenant, x.contextID)]
	if q == nil {
		q = &contextQueue{}
		r.contexts[contextKey(x.tenant, x.contextID)] = q
	}
	if dup := r.submittedLocked(q, msgID); dup != nil {
		r.mu.Unlock()
		return r.awaitDuplicate(ctx, dup)
	}
	adm := admission{start: q.active == ""}
	if !adm.start {
		policy := x.agent.Multitask
		if x.multitask != "" {
			policy = x.multitask
		}
		switch policy {
		case MultitaskEnqueue:
		case MultitaskInterrupt:
			adm.displaced = r.runs[q.active]
		default:
			busy := q.active
			r.mu.Unlock()
			return adm, errdefs.Conflictf("context %s already has a running task %s (agent %s rejects concurrent messages; wait, cancel it, or configure multitask: enqueue or interrupt)", x.contextID, busy, x.agent.ID)
		}
	}
	defer r.mu.Unlock()
	if r.draining {
		return adm, errdefs.Public(errdefs.NotAvailable(ErrDraining))
	}
	if err := r.logs.Register(x.log); err != nil { // a fresh id: never taken
		return adm, err
	}
	r.submitting.Add(1)
	if adm.start {
		q.active = x.runID
	} else {
		// Queue now, under the same lock as the decision, so that the running
		// task cannot end without seeing it; it starts only once created.
		q.queue = append(q.queue, x)
	}
	r.registerLocked(x)
	return adm, nil
}

// awaitDuplicate waits for the submission of the same message, busy or
// queued here, to be stored: the message is a retry, not a second message
// (the store's idempotency record answers the same question once the run
// is no longer here).
func (r *Runtime) awaitDuplicate(ctx context.Context, dup *execution) (admission, error) {
	select {
	case <-dup.created: // the first submission's commit is done
	case <-ctx.Done():
		return admission{}, ctx.Err()
	}
	if dup.createErr != nil {
		return admission{}, dup.createErr
	}
	return admission{dup: dup}, nil
}

// submittedLocked returns the execution the message msgID opened in q, if it
// is active or queued here. Callers hold r.mu.
func (r *Runtime) submittedLocked(q *contextQueue, msgID string) *execution {
	if x := r.runs[q.active]; x != nil && x.user[0].ID == msgID {
		return x
	}
	for _, x := range q.queue {
		if x.user[0].ID == msgID {
			return x
		}
	}
	return nil
}

// abandonSubmission undoes an execution whose submission was not stored.
// A duplicate message id is not an error: it answers the task the first
// submission started.
func (r *Runtime) abandonSubmission(ctx context.Context, a *Agent, req SendRequest, x *execution, err error) (Submission, error) {
	x.createErr = err
	close(x.created)
	r.forget(x)
	var dup *store.DuplicateError
	if !errors.As(err, &dup) {
		return Submission{}, err
	}
	return r.resubmission(ctx, a, req, run.Message{Message: x.user[0].Message}, dup.TaskID)
}

// resubmission answers a message whose id was used before in its context,
// by the task taskID. The same message to the same agent (and task) is a
// retry: it gets that task, and a stream of it starts where the attempt the
// message opened started. Anything else under the same id is a conflict.
func (r *Runtime) resubmission(ctx context.Context, a *Agent, req SendRequest, msg run.Message, taskID string) (Submission, error) {
	t, err := r.st.GetTask(ctx, taskID)
	if err != nil {
		return Submission{}, err
	}
	reused := func(how string) (Submission, error) {
		return Submission{}, errdefs.WithField("message.id", errdefs.Conflictf(
			"message id %q was already used in context %s %s; a new message needs a new id", msg.ID, t.ContextID, how))
	}
	switch {
	case t.AgentID != a.ID:
		return reused("for agent " + t.AgentID + " (task " + t.ID + "), not " + a.ID)
	case req.TaskID != "" && req.TaskID != t.ID:
		return reused("by task " + t.ID + ", not " + req.TaskID)
	}
	orig, nth, found, err := r.userMessage(ctx, t, msg.ID)
	if err != nil {
		return Submission{}, err
	}
	if found && !sameParts(orig.Parts, msg.Parts) {
		return reused("with different content (task " + t.ID + ")")
	}
	start, err := r.attemptStart(ctx, t.ID, nth)
	if err != nil {
		return Submission{}, err
	}
	return Submission{Task: t, Duplicate: true, StartSeq: start}, nil
}

// sameParts reports whether two messages say the same: their parts encode
// to the same JSON (a stored message has been through a store's encoding).
func sameParts(a, b []model.Part) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}

func tenantOf(t run.Task) string {
	if t.Tenant == "" {
		return run.DefaultTenant
	}
	return t.Tenant
}
