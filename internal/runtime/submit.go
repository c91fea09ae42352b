package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
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
	// ContextID places the message in a conversation; empty starts a new
	// one (or is inferred from TaskID).
	ContextID string
	// TaskID continues that task; it must be waiting for input.
	TaskID string
	// Message is the user's message; its ID, when the client chose one, is
	// the idempotency key within the context.
	Message  model.Message
	Metadata map[string]any
}

// Submission is what Send did.
type Submission struct {
	Task store.Task
	// Duplicate is true when the message had been submitted before; Task is
	// the task it went to (as it is now), and nothing new was started.
	Duplicate bool
	// StartSeq is the event seq just before the attempt this message opened
	// (0 for a new task), also for a duplicate: a stream of the submission
	// starts after it and so replays what a retried stream missed.
	StartSeq int64
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
	a, err := r.Agent(req.AgentID)
	if err != nil {
		return Submission{}, err
	}
	msg, err := normaliseUserMessage(req.Message)
	if err != nil {
		return Submission{}, err
	}
	if err := checkInputModes(a, msg.Message); err != nil {
		return Submission{}, err
	}
	r.mu.Lock()
	draining := r.draining
	r.mu.Unlock()
	if draining {
		return Submission{}, errdefs.Public(errdefs.NotAvailable(ErrDraining))
	}
	if req.ContextID != "" {
		if err := checkClientID(req.ContextID); err != nil {
			return Submission{}, errdefs.WithField("context_id", err)
		}
	}
	if req.TaskID != "" {
		return r.continueTask(ctx, a, req, msg)
	}
	contextID := req.ContextID
	if contextID == "" {
		contextID = newID()
	}
	now := time.Now().UTC()
	taskID := newID()
	l := r.logs.New(taskID)
	x := r.newExecution(a, store.Task{
		ID: taskID, ContextID: contextID, AgentID: a.ID, State: store.StateSubmitted,
		Metadata:  r.observedCreate(ctx, RunInfo{RunID: taskID, ContextID: contextID, AgentID: a.ID}, req.Metadata),
		CreatedAt: now, UpdatedAt: now,
	}, l, msg.Message, "")
	x.createdTask, x.newContext = true, req.ContextID == ""

	// Decide under the lock whether the context is free, so that two racing
	// messages cannot both start.
	r.mu.Lock()
	q := r.contexts[contextID]
	if q == nil {
		q = &contextQueue{}
		r.contexts[contextID] = q
	}
	if dup := r.submittedLocked(q, msg.ID); dup != nil {
		// The same message again while its run is busy or queued here: it
		// is a retry, not a second message (the store's idempotency record
		// answers the same question once the run is no longer here).
		r.mu.Unlock()
		select {
		case <-dup.created: // the first submission's commit is done
		case <-ctx.Done():
			return Submission{}, ctx.Err()
		}
		if dup.createErr != nil {
			return Submission{}, dup.createErr
		}
		return r.resubmission(ctx, a, req, msg, dup.runID)
	}
	var displaced *execution
	start := q.active == ""
	if !start {
		switch a.Multitask {
		case MultitaskEnqueue:
		case MultitaskInterrupt:
			displaced = r.runs[q.active]
		default:
			busy := q.active
			r.mu.Unlock()
			return Submission{}, errdefs.Conflictf("context %s already has a running task %s (agent %s rejects concurrent messages; wait, cancel it, or configure multitask: enqueue or interrupt)", contextID, busy, a.ID)
		}
	}
	if r.draining {
		r.mu.Unlock()
		return Submission{}, errdefs.Public(errdefs.NotAvailable(ErrDraining))
	}
	if err := r.logs.Register(l); err != nil { // a fresh id: never taken
		r.mu.Unlock()
		return Submission{}, err
	}
	r.submitting.Add(1)
	defer r.submitting.Done()
	if start {
		q.active = taskID
	} else {
		// Queue now, under the same lock as the decision, so that the running
		// task cannot end without seeing it; it starts only once created.
		q.queue = append(q.queue, x)
	}
	r.registerLocked(x)
	r.mu.Unlock()

	// x.task, x.user and x.key are the submission's until x.created is
	// closed: the execution's goroutine waits for that.
	evs := [3]stateEvent{
		{body: RunStartData{ContextID: contextID, AgentID: a.ID, Attempt: 1}},
		{body: StatusData{State: store.StateSubmitted}},
	}
	n := 2
	if start {
		// A task that starts at once is created working: its events still
		// pass through submitted, and one commit does what two did.
		x.task.State, x.task.Attempt = store.StateWorking, 1
		evs[n] = stateEvent{body: StatusData{State: store.StateWorking}}
		n++
	}
	// The task is created with its lease, running or queued: a replica
	// that dies right after the commit leaves a lease that expires, and
	// another replica's sweep starts or resumes the run.
	claim := r.leaseClaim()
	_, err = r.submitCommit(ctx, l, store.Change{
		Idempotency: &x.key,
		TaskID:      taskID,
		CreateTask:  &x.task,
		Messages:    x.user[:],
		Lease:       claim,
	}, evs[:n]...)
	if err != nil {
		return r.abandonSubmission(ctx, a, req, x, err)
	}
	x.task.Version = 1
	created := x.task // x.task belongs to the execution's goroutine once launched
	x.holdLease(claim.Granted)
	close(x.created)
	if start {
		r.launch(x)
	} else {
		if displaced != nil {
			displaced.interrupt(engine.CauseUserInput, "superseded by task "+taskID)
		}
	}
	return Submission{Task: created}, nil
}

// submitPatience bounds how long a submission waits for the store: a
// client waiting on a database that is down gets a retryable 503 rather
// than a request that never ends. The change is atomic, so a retry of the
// same message finds it stored or not, never half (and a stored one holds
// a lease, which the sweep recovers if nobody runs it).
const submitPatience = 5 * time.Second

// submitCommit is commit for a client's submission, within submitPatience.
func (r *Runtime) submitCommit(ctx context.Context, l *runlog.Log, c store.Change, evs ...stateEvent) (int64, error) {
	cctx, cancel := context.WithTimeout(ctx, submitPatience)
	defer cancel()
	first, err := r.commit(cctx, l, c, evs...)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil && !errdefs.IsConflict(err) {
		err = errdefs.NotAvailable(fmt.Errorf("the store did not take the submission within %v: %w", submitPatience, err))
	}
	return first, err
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

// continueTask answers an input-required task: the message resumes the run
// from its latest checkpoint in a new attempt.
func (r *Runtime) continueTask(ctx context.Context, a *Agent, req SendRequest, msg store.Message) (Submission, error) {
	t, err := r.st.GetTask(ctx, req.TaskID)
	if err != nil {
		return Submission{}, err
	}
	if req.ContextID != "" && req.ContextID != t.ContextID {
		return Submission{}, errdefs.WithField("context_id", errdefs.Validationf("task %s belongs to context %s, not %s", t.ID, t.ContextID, req.ContextID))
	}
	if t.AgentID != a.ID {
		return Submission{}, errdefs.Validationf("task %s belongs to agent %s, not %s", t.ID, t.AgentID, a.ID)
	}
	if !t.State.Interrupted() {
		// A resend of the answer that resumed the task is a retry, not a
		// new message.
		if _, _, found, err := r.userMessage(ctx, t, msg.ID); err != nil || found {
			if err != nil {
				return Submission{}, err
			}
			return r.resubmission(ctx, a, req, msg, t.ID)
		}
		if t.State.Terminal() {
			return Submission{}, errdefs.Conflict(errorsJoin(ErrTaskTerminal, "task "+t.ID+" is "+string(t.State)))
		}
		return Submission{}, errdefs.Conflictf("task %s is %s, not waiting for input; wait for it or cancel it", t.ID, t.State)
	}
	l, err := r.logs.Activate(ctx, t.ID)
	if err != nil {
		return Submission{}, err
	}
	r.mu.Lock()
	if r.runs[t.ID] != nil || r.canceling[t.ID] {
		r.mu.Unlock()
		r.logs.Release(l) // still active for the execution that owns it
		return Submission{}, errdefs.Conflictf("task %s is being resumed or canceled already", t.ID)
	}
	if r.draining {
		r.mu.Unlock()
		r.logs.Release(l)
		return Submission{}, errdefs.Public(errdefs.NotAvailable(ErrDraining))
	}
	r.submitting.Add(1)
	defer r.submitting.Done()
	q := r.contexts[t.ContextID]
	if q == nil {
		q = &contextQueue{}
		r.contexts[t.ContextID] = q
	}
	if q.active != "" {
		busy := q.active
		r.mu.Unlock()
		l.Deactivate()
		r.logs.Release(l)
		return Submission{}, errdefs.Conflictf("context %s has a running task %s; task %s can resume when it ends", t.ContextID, busy, t.ID)
	}
	q.active = t.ID
	next := t
	next.State, next.Attempt, next.StatusMessage, next.Error = store.StateWorking, t.Attempt+1, nil, nil
	next.CancelRequested = false
	next.UpdatedAt = time.Now().UTC()
	x := r.newExecution(a, next, l, msg.Message, engine.SignalInput)
	x.host.reply = &engine.UserReply{Parts: msg.Parts}
	r.registerLocked(x)
	r.mu.Unlock()

	claim := r.leaseClaim()
	first, err := r.submitCommit(ctx, l, store.Change{
		Idempotency: &x.key,
		TaskID:      t.ID,
		UpdateTask:  &x.task,
		Messages:    x.user[:],
		Lease:       claim,
	}, stateEvent{body: RunStartData{ContextID: t.ContextID, AgentID: a.ID, Attempt: next.Attempt, Resumed: engine.SignalInput}},
		stateEvent{body: StatusData{State: store.StateWorking}})
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
	return r.resubmission(ctx, a, req, store.Message{Message: x.user[0].Message}, dup.TaskID)
}

// resubmission answers a message whose id was used before in its context,
// by the task taskID. The same message to the same agent (and task) is a
// retry: it gets that task, and a stream of it starts where the attempt the
// message opened started. Anything else under the same id is a conflict.
func (r *Runtime) resubmission(ctx context.Context, a *Agent, req SendRequest, msg store.Message, taskID string) (Submission, error) {
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

// userMessage finds the message msgID in task t's transcript, and how many
// user messages of t precede it: the nth user message of a task opened its
// first attempt (n = 0) or the nth attempt resumed with input.
func (r *Runtime) userMessage(ctx context.Context, t store.Task, msgID string) (m model.Message, nth int, found bool, err error) {
	q := store.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Limit: 1000}
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

// sameParts reports whether two messages say the same: their parts encode
// to the same JSON (a stored message has been through a store's encoding).
func sameParts(a, b []model.Part) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}

// logEnd is the run's last event seq (0 when it cannot be read).
func (r *Runtime) logEnd(ctx context.Context, runID string) int64 {
	page, err := r.st.ReadEvents(ctx, runID, 1<<62, 1)
	if err != nil {
		return 0
	}
	return page.LastSeq
}

// newExecution makes an attempt of task t with the user message msg that
// started it.
func (r *Runtime) newExecution(a *Agent, t store.Task, l *runlog.Log, msg model.Message, resume string) *execution {
	tenant := tenantOf(t)
	// The attempt's context is not a child of the runtime's: a child would
	// cost a locked map insert and delete in the parent per run. The
	// runtime cancels what it registered when it stops (registerLocked).
	bg := context.Background()
	if tenant != store.DefaultTenant { // the store assumes it otherwise
		bg = store.WithTenant(bg, tenant)
	}
	ctx, cancel := context.WithCancel(bg)
	x := &execution{
		r: r, runID: t.ID, contextID: t.ContextID, tenant: tenant, agent: a, log: l, task: t, resume: resume,
		user:       [1]store.Message{{ContextID: t.ContextID, TaskID: t.ID, Message: msg}},
		key:        store.IdempotencyKey{ContextID: t.ContextID, MessageID: msg.ID},
		ctx:        ctx,
		bg:         bg,
		hardCancel: cancel,
		interrupts: make(chan engine.Interrupt, 1),
		ended:      make(chan struct{}),
		created:    make(chan struct{}),
	}
	x.host = host{x: x, id: engine.SanitiseID(t.ID)}
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

func tenantOf(t store.Task) string {
	if t.Tenant == "" {
		return store.DefaultTenant
	}
	return t.Tenant
}

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
	q := r.contexts[x.contextID]
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
		delete(r.contexts, x.contextID)
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

// CheckUserMessage reports what is wrong with a user message, and where
// (a path such as "message.parts[0].text"), before anything is stored.
func CheckUserMessage(m model.Message) (field string, err error) {
	if m.Role != "" && m.Role != model.RoleUser {
		return "message.role", errdefs.Validationf("must be %q, got %q", model.RoleUser, m.Role)
	}
	if m.ID != "" {
		if err := checkClientID(m.ID); err != nil {
			return "message.id", err
		}
	}
	if len(m.Parts) == 0 {
		return "message.parts", errdefs.Validationf("must not be empty")
	}
	for i, p := range m.Parts {
		if p.Type == model.PartToolCall || p.Type == model.PartToolResult {
			return partField(i) + ".type", errdefs.Validationf("a user message cannot carry %s parts", p.Type)
		}
		if err := p.Validate(); err != nil {
			var pe *model.PartError
			if errors.As(err, &pe) {
				return partField(i) + "." + pe.Member, errdefs.Validationf("%s", pe.Reason)
			}
			return partField(i), errdefs.Validation(err)
		}
		if p.Type == model.PartText && strings.TrimSpace(p.Text) == "" {
			return partField(i) + ".text", errdefs.Validationf("must not be blank (only white space)")
		}
	}
	return "", nil
}

func partField(i int) string { return "message.parts[" + strconv.Itoa(i) + "]" }

// maxClientID bounds the ids a client may choose (context and message ids).
const maxClientID = 256

// checkClientID reports whether id, chosen by a client, can name a context
// or a message: 1 to maxClientID bytes of UTF-8 without white space or
// control characters, so that it survives URLs, logs and headers as is.
func checkClientID(id string) error {
	if id == "" || len(id) > maxClientID {
		return errdefs.Validationf("%q: want 1 to %d bytes", truncateID(id), maxClientID)
	}
	if !utf8.ValidString(id) {
		return errdefs.Validationf("%q: not valid UTF-8", truncateID(id))
	}
	for _, c := range id {
		if unicode.IsSpace(c) || unicode.IsControl(c) {
			return errdefs.Validationf("%q: must not contain white space or control characters", truncateID(id))
		}
	}
	return nil
}

// truncateID keeps an error message about an id readable.
func truncateID(id string) string {
	if len(id) <= 64 {
		return id
	}
	return id[:64] + "…"
}

// normaliseUserMessage checks a user message and fills in its defaults; its
// time is put in the form stores keep (see store.StoredTime).
func normaliseUserMessage(m model.Message) (store.Message, error) {
	if field, err := CheckUserMessage(m); err != nil {
		return store.Message{}, errdefs.WithField(field, err)
	}
	if m.Role == "" {
		m.Role = model.RoleUser
	}
	if m.ID == "" {
		m.ID = newID()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = storedNow()
	} else {
		m.CreatedAt = store.StoredTime(m.CreatedAt)
	}
	return store.Message{Message: m}, nil
}

func errorsJoin(base error, detail string) error {
	return &detailed{base: base, detail: detail}
}

// detailed is a sentinel error with a specific message.
type detailed struct {
	base   error
	detail string
}

func (e *detailed) Error() string { return e.detail + ": " + e.base.Error() }
func (e *detailed) Unwrap() error { return e.base }
