package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// execution is one attempt of a run on this replica. Its goroutine is the
// only writer of the task while it lives; everybody else talks to it through
// interrupts and the hard-cancel function.
//
// Fields fall in four groups by who may touch them: set once by
// newExecution and then read-only; owned by the execution's goroutine (the
// submission's until created is closed); guarded by Runtime.mu; guarded by
// mu (leaseMu also serialises lease renewals, see renew).
type execution struct {
	// Read-only after newExecution: any goroutine may read them.
	r *Runtime
	// runID, contextID and tenant name the run; unlike task they never
	// change.
	runID, contextID, tenant string
	agent                    *Agent
	log                      *runlog.Log
	// host is the attempt's engine.Host (it has its own lock).
	host host
	// obs sees the attempt when the runtime has an Observer (observe.go).
	obs AttemptObserver
	// spanCtx is the attempt's context with its span, once the observer
	// opened one: the attempt's log records are written with it, so that
	// they carry the trace_id and span_id (logContext).
	spanCtx context.Context
	ctx     context.Context
	// bg has ctx's values but not its cancellation, for the writes that
	// must happen whatever becomes of the attempt.
	bg         context.Context
	hardCancel context.CancelFunc
	interrupts chan engine.Interrupt
	// ended is closed once the execution is gone from the runtime: its
	// attempt ended and ended() ran, or it never ran (dequeued, forgotten).
	ended chan struct{}
	// created is closed once the submission that made this attempt is
	// durable (createErr, written before, says if it failed); a queued
	// attempt may be launched before that and waits.
	created   chan struct{}
	createErr error

	// Owned by the execution's goroutine; other goroutines read them only
	// after ended is closed.
	//
	// task is the stored task as last written by this execution. A commit
	// writes it in place (and puts it back if the commit fails): it, user
	// and key are fields so that store changes point into the execution
	// rather than to allocations of their own.
	task run.Task
	// user is the user message that started the attempt.
	user [1]run.Message
	// key is the idempotency key of that message.
	key store.IdempotencyKey
	// resume is why this attempt resumes ("" = fresh).
	resume string
	// createdTask says the submission that made this attempt created the
	// task: the task's transcript is the user message and then what finish
	// stores. newContext says it also opened the context, which then holds
	// only that message when the attempt starts (see history).
	createdTask, newContext bool
	// durable is set when the task's create waits for the run's first
	// write (deferCreate), and closed once it is stored; such an attempt
	// takes no lease of its own.
	durable chan struct{}
	// finished says finish stored the attempt's outcome, with the
	// transcript messages stored; final is the task as the store then
	// held it, which blocking callers of a run that ended are answered
	// with (wait).
	finished bool
	final    run.Task
	// handover is set when the attempt stopped for a drain: the run goes on
	// elsewhere.
	handover bool
	stored   []run.Message
	// seeded lists the ids of the transcript messages a fresh attempt's
	// board started from (set by history); it is firstSeeded's memory when
	// that is the user message alone.
	seeded      []string
	firstSeeded [1]string

	// Guarded by Runtime.mu.
	//
	// endedClosed says ended was closed; launched, that the goroutine
	// started.
	endedClosed bool
	launched    bool

	// leaseMu serialises the lease's renewals and release (see renew);
	// lease itself is guarded by mu.
	leaseMu sync.Mutex

	// mu guards the fields below.
	mu sync.Mutex
	// lease is the run's lease while this attempt executes.
	lease store.Lease
	// heldCheckpoint is, with a volatile store, the attempt's latest
	// checkpoint, not yet written (see host.Checkpoint).
	heldCheckpoint *engine.Checkpoint
	usage          model.TokenUsage
	// modelUsage splits usage by model name, to price the run.
	modelUsage  map[string]model.TokenUsage
	artifacts   []model.Artifact
	cancelCause engine.Cause
	cancelNote  string
	lostErr     error
	graceTimer  *time.Timer

	// steer holds the signals not acted on yet (signals.go).
	steer steering
}

// noteArtifact merges an artifact update into the task's artifacts.
func (x *execution) noteArtifact(a ArtifactData) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range x.artifacts {
		if x.artifacts[i].ID == a.Artifact.ID {
			if a.Append {
				x.artifacts[i].Parts = append(x.artifacts[i].Parts, a.Artifact.Parts...)
			} else {
				x.artifacts[i] = a.Artifact
			}
			return
		}
	}
	x.artifacts = append(x.artifacts, a.Artifact)
}

// addUsage accumulates usage and checks the budgets.
func (x *execution) addUsage(modelName string, u model.TokenUsage) error {
	x.mu.Lock()
	x.usage = x.usage.Add(u)
	x.modelUsage = addModelUsage(x.modelUsage, modelName, u)
	// The run's usage: its earlier attempts' (recorded on the task, which
	// only this execution writes, at its end) and this one's.
	run := x.task.Usage.Add(x.usage)
	x.mu.Unlock()
	tokens := u.Add(model.TokenUsage{}).TotalTokens
	agentTotal := x.r.agentUsage(x.agent.ID).add(tokens)
	// Every counter is charged before any budget is checked.
	periodErr := x.chargePeriod(tokens)
	for _, b := range []struct {
		name      string
		used, lim int64
	}{
		{"max_tokens_per_run", run.TotalTokens, x.agent.MaxTokensPerRun},
		{"max_input_tokens_per_run", run.InputTokens, x.agent.MaxInputTokensPerRun},
		{"max_output_tokens_per_run", run.OutputTokens, x.agent.MaxOutputTokensPerRun},
	} {
		if b.lim > 0 && b.used > b.lim {
			return errdefs.BudgetExceededf("run %s used %d tokens, over the agent's budget %s of %d", x.runID, b.used, b.name, b.lim)
		}
	}
	if lim := x.agent.MaxTokensTotal; lim > 0 && agentTotal > lim {
		return errdefs.BudgetExceededf("agent %s used %d tokens, over its total budget of %d", x.agent.ID, agentTotal, lim)
	}
	return periodErr
}

// interrupt asks the engine to stop (cooperatively), and cancels its
// context after the grace period. The first cause wins, except over a
// pause (which stops the run at a checkpoint anyway).
func (x *execution) interrupt(cause engine.Cause, note string) {
	x.mu.Lock()
	if x.cancelCause != "" && x.cancelCause != engine.CausePause {
		x.mu.Unlock()
		return
	}
	x.cancelCause, x.cancelNote = cause, note
	x.graceTimer = time.AfterFunc(x.r.grace, x.hardCancel)
	x.mu.Unlock()
	select {
	case x.interrupts <- engine.Interrupt{Cause: cause, Detail: note}:
	default:
	}
}

// abandon stops the attempt without writing anything more: the run belongs
// to someone else now.
func (x *execution) abandon(err error) {
	x.mu.Lock()
	if x.lostErr == nil {
		x.lostErr = err
	}
	x.mu.Unlock()
	x.hardCancel()
}

// run executes the attempt and records its outcome.
func (x *execution) run() {
	defer x.hardCancel()
	<-x.created
	if x.createErr != nil {
		return
	}
	r := x.r
	x.mu.Lock()
	leased := x.lease.RunID != ""
	x.mu.Unlock()
	if !leased && x.durable == nil {
		if err := x.acquire(); err != nil {
			r.log.WarnContext(x.logContext(), "run not started here: no lease", "run_id", x.runID, "err", err)
			return
		}
	}
	defer func() { x.release(x.handover) }()
	if x.task.State == run.StateSubmitted {
		old := x.task
		t := &x.task
		t.State, t.Attempt = run.StateWorking, 1
		if _, err := r.commit(x.ctx, x.log, store.Change{UpdateTask: t}, stateEvent{body: StatusData{State: run.StateWorking}}); err != nil {
			x.task = old
			r.log.ErrorContext(x.logContext(), "run could not start", "run_id", x.runID, "err", err)
			return
		}
		t.Version++
	}

	defer x.observeEnd()
	res, runErr := x.execute()
	x.mu.Lock()
	lost := x.lostErr
	if x.graceTimer != nil {
		x.graceTimer.Stop()
	}
	x.mu.Unlock()
	if lost != nil {
		r.log.WarnContext(x.logContext(), "run abandoned", "run_id", x.runID, "err", lost)
		return
	}
	if err := x.finish(res, runErr); err != nil {
		// Leave the run to the recovery sweep (here or on another replica):
		// its lease expires now and it resumes from its last checkpoint.
		x.handover = true
		if err := x.writeHeldCheckpoint(); err != nil {
			r.log.ErrorContext(x.logContext(), "checkpoint of a handed over run could not be stored", "run_id", x.runID, "err", err)
		}
		r.log.ErrorContext(x.logContext(), "run outcome could not be stored; handing the run over", "run_id", x.runID, "err", err)
	}
}

// execute drives the agent over the engine for this attempt.
func (x *execution) execute() (*agent.Result, error) {
	ctx, cancel := x.attemptContext()
	defer cancel()
	ctx = x.observeAttempt(ctx)
	if err := x.checkPeriod(ctx); err != nil {
		return nil, err
	}
	history, err := x.history(ctx)
	if err != nil {
		return nil, err
	}
	// The options are filled in by index (appends would move them and their
	// closures to the heap); agent.Run keeps none of them.
	var opts [5]agent.RunOption
	n, ctx, err := x.runOptions(ctx, &opts, history)
	if err != nil {
		return nil, err
	}
	x.startSteering() // signals pending since an earlier attempt (signals_relay.go)
	req := agent.Request{Message: x.user[0].Message, RunID: x.runID, TaskID: x.runID, ContextID: x.contextID}
	res, err := agent.Run(ctx, x.agent.Agent, x.agent.Engine, req, opts[:n]...)
	res, err = x.handoff(ctx, res, err)
	return x.namedCause(ctx, res, err)
}

// attemptContext is the attempt's context: x.ctx under the agent's timeout
// and wall-time budget, each with its own cause.
func (x *execution) attemptContext() (context.Context, context.CancelFunc) {
	ctx, stopTimeout, stopBudget := x.ctx, context.CancelFunc(func() {}), context.CancelFunc(func() {})
	if d := x.agent.Timeout; d > 0 {
		ctx, stopTimeout = context.WithTimeoutCause(ctx, d, errdefs.Timeoutf("run %s took longer than agent %s's timeout of %v", x.runID, x.agent.ID, d))
	}
	if d := x.agent.MaxWallTime; d > 0 {
		ctx, stopBudget = context.WithTimeoutCause(ctx, d, errdefs.BudgetExceededf("run %s ran longer than the agent's budget max_wall_time of %v", x.runID, d))
	}
	return ctx, func() { stopBudget(); stopTimeout() }
}

// runOptions fills opts with the attempt's agent.Run options — the engine
// host, the board seeded with history, the agent's dependencies and, when
// the attempt resumes an engine that can, the latest checkpoint — and
// returns how many it filled and ctx with the resume context.
func (x *execution) runOptions(ctx context.Context, opts *[5]agent.RunOption, history []model.Message) (int, context.Context, error) {
	opts[0] = agent.WithEngineHost(x.engineHost())
	seed := agent.BoardSeederFunc(func(context.Context, agent.RunInfo, *agent.Request) (*engine.Board, error) {
		b := engine.NewBoard()
		if history == nil { // the user message alone; SetChannel copies it
			b.SetChannel(engine.MainChannel, []model.Message{x.user[0].Message})
		} else {
			b.SetChannel(engine.MainChannel, history)
		}
		return b, nil
	})
	opts[1] = agent.WithBoardSeed(seed)
	n := 2
	if x.agent.MaxRevise > 1 {
		opts[1] = agent.WithBoardSeed(revisionSeeder{BoardSeederFunc: seed})
		opts[n] = agent.WithMaxRevise(x.agent.MaxRevise)
		n++
	}
	if x.agent.Deps != nil {
		opts[n] = agent.WithDependencies(x.agent.Deps)
		n++
	}
	if x.resume == "" {
		return n, ctx, nil
	}
	cp, err := x.r.st.LoadCheckpoint(ctx, x.runID)
	if err != nil {
		return n, ctx, err
	}
	x.skipCheckpointed(cp)
	if cp != nil && engine.CapabilitiesOf(x.agent.Engine).SupportsResume {
		opts[n] = agent.WithResumeFrom(cp)
		n++
		ctx = engine.WithResumeContext(ctx, engine.ResumeContext{
			Attempt: x.task.Attempt, StartedAt: cp.OriginalStartedAt, Signal: x.resume,
			CheckpointAt: cp.Timestamp, Step: cp.Step,
		})
	}
	return n, ctx, nil
}

// namedCause names the attempt's own timeout or wall-time budget as what
// stopped it, rather than "context deadline exceeded".
func (x *execution) namedCause(ctx context.Context, res *agent.Result, err error) (*agent.Result, error) {
	if cause := context.Cause(ctx); cause != nil && cause != context.DeadlineExceeded && x.ctx.Err() == nil {
		if err != nil {
			err = cause
		} else if res != nil && res.Err != nil {
			res.Err = cause
		}
	}
	return res, err
}

// history loads the transcript that seeds the board: the context's latest
// messages, leaving out those of tasks created after this one (queued
// behind it). Task ids are time-ordered UUIDs, so "after" is a comparison.
//
// When the attempt's submission opened the context, the transcript holds
// exactly the user message committed with the task — messages of later
// tasks (queued behind it, or interrupting it) are left out anyway — so it
// is not read back when the store holds the message as it is; history
// then returns nil, which stands for that message alone.
func (x *execution) history(ctx context.Context) ([]model.Message, error) {
	if m := x.user[0].Message; x.newContext && storedAsIs(m) {
		x.firstSeeded[0] = m.ID
		x.seeded = x.firstSeeded[:]
		return nil, nil
	}
	limit := x.agent.historyLimit()
	var page run.MessagePage
	err := x.r.retry(ctx, "transcript read", x.runID, func() (err error) {
		page, err = x.r.st.ListMessages(ctx, run.MessageQuery{ContextID: x.contextID, Last: limit})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]model.Message, 0, len(page.Messages))
	x.seeded = make([]string, 0, len(page.Messages))
	for _, m := range page.Messages {
		if m.TaskID != "" && m.TaskID > x.runID {
			continue // a later task's message (queued behind this one)
		}
		out = append(out, m.Message)
		x.seeded = append(x.seeded, m.ID)
	}
	return withoutOrphanedResults(out), nil
}

// writeHeldCheckpoint stores the checkpoint host.Checkpoint held back, if
// any; it stays held if the store fails.
func (x *execution) writeHeldCheckpoint() error {
	x.mu.Lock()
	cp := x.heldCheckpoint
	x.mu.Unlock()
	if cp == nil {
		return nil
	}
	if err := x.r.saveCheckpoint(x.bg, x.stamp(*cp)); err != nil {
		return err
	}
	x.mu.Lock()
	if x.heldCheckpoint == cp {
		x.heldCheckpoint = nil
	}
	x.mu.Unlock()
	return nil
}

// outcome is how an attempt ended, as the task will record it.
type outcome struct {
	state  run.TaskState
	err    *run.TaskError
	status *model.Message
	prompt *engine.UserPrompt
	keep   bool // persist the attempt's new transcript messages
	said   bool // status is a message of the transcript already
}

func (x *execution) classify(res *agent.Result, runErr error) outcome {
	x.mu.Lock()
	cause, note := x.cancelCause, x.cancelNote
	x.mu.Unlock()
	if runErr != nil {
		return x.failure(runErr)
	}
	switch res.Status {
	case agent.StatusCompleted:
		if cause == engine.CauseUserCancel && engine.CapabilitiesOf(x.agent.Engine).HandlesParkedInterrupts {
			return handledCancel(res, note)
		}
		return outcome{state: run.StateCompleted, keep: res.Committed}
	case agent.StatusInterrupted:
		if p := x.host.pendingPrompt(); p != nil && (cause == "" || cause == engine.CausePause) {
			msg := model.Message{Role: model.RoleAssistant, Parts: p.Parts, Name: x.agent.ID}
			state := run.StateInputRequired
			if p.Auth {
				state = run.StateAuthRequired
			}
			return outcome{state: state, status: &msg, prompt: p, keep: true}
		}
	}
	switch cause {
	case engine.CausePause:
		if o, ok := x.pausedOutcome(res); ok {
			return o
		}
	case engine.CauseHostShutdown:
		// Not an end: the run stays working and resumes from its checkpoint.
		return outcome{state: run.StateWorking, keep: false}
	case engine.CauseUserCancel, engine.CauseUserInput:
		reason := "canceled by the user"
		if note != "" {
			reason = note
		}
		msg := model.NewText(model.RoleAssistant, reason)
		return outcome{state: run.StateCanceled, status: &msg, keep: res.Committed}
	}
	if res.Err != nil {
		o := x.failure(res.Err)
		o.keep = res.Committed
		return o
	}
	return x.failure(errdefs.Internalf("engine ended with status %q and no error", res.Status))
}

// failure is the outcome of an attempt that failed with err. The task
// keeps err's message, which its readers see — unless err says only that
// something the agent needed was unreachable (class NotAvailable, not
// marked public): its cause names hosts and drivers, so it goes to the log
// and the task says what a client can act on.
func (x *execution) failure(err error) outcome {
	class := errdefs.ClassOf(err)
	text := err.Error()
	if class == errdefs.ClassNotAvailable && !errdefs.IsPublic(err) {
		x.r.log.WarnContext(x.logContext(), "run failed: a service it needs is unavailable", "run_id", x.runID, "err", err)
		text = "a service this agent needs (its model endpoint, a tool or the store) is unavailable; retry later"
	}
	state := run.StateFailed
	if class == errdefs.ClassValidation {
		state = run.StateRejected
	}
	if errors.Is(err, context.Canceled) {
		state = run.StateCanceled
	}
	msg := model.NewText(model.RoleAssistant, text)
	return outcome{state: state, err: &run.TaskError{Class: string(class), Message: text}, status: &msg}
}

// finish records the attempt's outcome in one commit: the task's new state,
// the transcript messages the attempt produced, the status event and
// run.end — all durable before run.end becomes visible (invariant 6).
func (x *execution) finish(res *agent.Result, runErr error) error {
	o := x.classify(res, runErr)
	old, stored := x.task, false
	defer func() {
		if !stored {
			x.task = old // as last written
		}
	}()
	t := &x.task
	x.foldTotals(t)
	t.State, t.Error, t.StatusMessage = o.state, o.err, o.status
	if !o.state.Terminal() || o.state == run.StateFailed {
		// The next attempt resumes from the latest checkpoint (a failed
		// run's, when retried): it is stored before the task says the
		// run can go on.
		if err := x.writeHeldCheckpoint(); err != nil {
			return err
		}
	}
	msgs, err := x.finalMessages(o, res, t)
	if err != nil {
		return err
	}
	evs := finishEvents(o, t)
	x.host.mu.Lock()
	x.host.ended = true
	x.host.mu.Unlock()
	release := x.leaseToGive(o.state)
	var settled []run.Message // msgs and the relayed feedback the commit stores
	settle := func(msgs []run.Message) []run.Message {
		settled = x.settleSignals(t, o, msgs)
		return settled
	}
	rebase := x.rebaseFinish(t, msgs, release, settle)
	change := store.Change{UpdateTask: t, Stored: &x.final, Messages: settle(msgs), Release: release}
	if _, err := x.r.commitRebasing(x.bg, x.log, change, rebase, evs...); err != nil {
		x.keepLease(release)
		return err
	}
	stored = true
	t.Version++
	x.finished, x.stored = true, settled
	x.handover = o.state == run.StateWorking
	if o.state.Terminal() {
		x.log.End()
	}
	return nil
}

// foldTotals adds the attempt's usage and artifacts to t.
func (x *execution) foldTotals(t *run.Task) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t.Usage = t.Usage.Add(x.usage)
	t.ModelUsage = mergeModelUsage(t.ModelUsage, x.modelUsage)
	if len(x.artifacts) > 0 {
		t.Artifacts = mergeArtifacts(t.Artifacts, x.artifacts)
	}
}

// finalMessages are the transcript messages the attempt's final commit
// stores: the engine's new messages when the outcome keeps them, feedback
// no turn consumed, and the status message (named, and set on t) when the
// run stops or parks with one.
func (x *execution) finalMessages(o outcome, res *agent.Result, t *run.Task) ([]run.Message, error) {
	var msgs []run.Message
	if o.keep && res != nil && res.LastBoard != nil {
		var err error
		if msgs, err = x.newMessages(res.LastBoard); err != nil {
			return nil, err
		}
	}
	msgs = append(msgs, x.leftoverFeedback(o)...)
	if o.status != nil && o.state != run.StateWorking {
		m := *o.status
		m.ID = messageID(t.ID, -t.Attempt)
		m.CreatedAt = storedNow()
		t.StatusMessage = &m
		if o.prompt != nil || o.err == nil && !o.said {
			msgs = append(msgs, run.Message{ContextID: t.ContextID, TaskID: t.ID, Message: m})
		}
	}
	return msgs, nil
}

// leaseToGive is the lease that a run which ends or parks in state gives up
// in its final commit (a handover lets it expire instead, see release). It
// is no longer renewed from here on: leaseMu waits for a renewal round in
// flight, and later rounds skip an execution without a lease. No lock is
// held across the commit, so a slow commit delays no other run's renewal.
func (x *execution) leaseToGive(state run.TaskState) *store.Lease {
	if state == run.StateWorking {
		return nil
	}
	x.leaseMu.Lock()
	defer x.leaseMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lease.RunID == "" {
		return nil
	}
	l := x.lease
	x.lease = store.Lease{}
	return &l
}

// keepLease takes back a lease whose release commit failed, so that release
// gives it up (or renewal keeps it) as before.
func (x *execution) keepLease(l *store.Lease) {
	if l == nil {
		return
	}
	x.mu.Lock()
	if x.lease.RunID == "" {
		x.lease = *l
	}
	x.mu.Unlock()
}

// finishEvents are the events that end attempt outcome o of task t: the
// prompt of a run that asks, the new status, and run.end.
func finishEvents(o outcome, t *run.Task) []stateEvent {
	evs := make([]stateEvent, 0, 3)
	if o.prompt != nil {
		evs = append(evs, stateEvent{body: InputData{Prompt: *t.StatusMessage, Schema: o.prompt.Schema, Source: o.prompt.Source}})
	}
	if o.state != run.StateWorking {
		evs = append(evs, stateEvent{body: StatusData{State: o.state, Message: t.StatusMessage, Error: o.err}})
	}
	return append(evs, stateEvent{body: RunEndData{State: o.state, Error: o.err, Usage: t.Usage}})
}

// rebaseFinish resolves a conflict of the final commit of t: someone else
// wrote the task meanwhile (a cancel request from another replica), so
// the outcome goes on top of their version, a few times at most.
// The signals pending on the task are settled again on its version (settle).
func (x *execution) rebaseFinish(t *run.Task, msgs []run.Message, release *store.Lease, settle func([]run.Message) []run.Message) runlog.Rebase {
	tries := 0
	return func(conflict error) (store.Change, error) {
		if tries++; tries > 5 {
			return store.Change{}, conflict
		}
		fresh, err := x.r.st.GetTask(x.bg, t.ID)
		if err != nil {
			return store.Change{}, err
		}
		if fresh.State.Terminal() {
			return store.Change{}, fmt.Errorf("run %s ended elsewhere as %s: %w", t.ID, fresh.State, conflict)
		}
		t.Version, t.CancelRequested, t.Signals = fresh.Version, fresh.CancelRequested, fresh.Signals
		return store.Change{UpdateTask: t, Stored: &x.final, Messages: settle(msgs), Release: release}, nil
	}
}

// newMessages returns the main-channel messages of the final board that the
// transcript does not hold yet, named deterministically when unnamed, with
// their times as the store keeps them.
//
// A fresh attempt's board started from the transcript it read (history),
// and nobody else writes this task's messages while it executes, so the
// messages it seeded are the ones to leave out; a resumed attempt's board
// comes from a checkpoint, so the transcript is read again.
func (x *execution) newMessages(b *engine.Board) ([]run.Message, error) {
	known := x.seeded
	if x.resume != "" {
		var page run.MessagePage
		err := x.r.retry(x.bg, "transcript read", x.runID, func() (err error) {
			// The seeded messages are among the latest historyLimit, with
			// room for those of tasks queued behind this one.
			page, err = x.r.st.ListMessages(x.bg, run.MessageQuery{ContextID: x.contextID, Last: x.agent.historyLimit() + 1000})
			return err
		})
		if err != nil {
			return nil, err
		}
		known = make([]string, len(page.Messages))
		for i, m := range page.Messages {
			known[i] = m.ID
		}
	}
	var index map[string]bool // ids to leave out, for long transcripts; short ones are scanned
	if len(known) > 16 {
		index = make(map[string]bool, len(known))
		for _, id := range known {
			index[id] = true
		}
	}
	var out []run.Message
	now := storedNow()
	for i, m := range b.Channel(engine.MainChannel) {
		if isRevision(m) {
			continue
		}
		if m.ID == "" {
			m.ID = messageID(x.runID, i)
		}
		if index != nil {
			if index[m.ID] {
				continue
			}
			index[m.ID] = true
		} else if slices.Contains(known, m.ID) || containsID(out, m.ID) {
			continue
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		} else {
			m.CreatedAt = store.StoredTime(m.CreatedAt)
		}
		if m.Name == "" && m.Role == model.RoleAssistant {
			m.Name = x.agent.ID
		}
		out = append(out, run.Message{ContextID: x.contextID, TaskID: x.runID, Message: m})
	}
	return out, nil
}

// containsID reports whether msgs holds a message with id.
func containsID(msgs []run.Message, id string) bool {
	for i := range msgs {
		if msgs[i].ID == id {
			return true
		}
	}
	return false
}

func mergeArtifacts(old, cur []model.Artifact) []model.Artifact {
	out := append([]model.Artifact(nil), old...)
	for _, a := range cur {
		replaced := false
		for i := range out {
			if out[i].ID == a.ID {
				out[i], replaced = a, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}
