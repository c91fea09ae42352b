package runtime

import (
	"context"
	"fmt"
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
	// multitask overrides the agent's policy for the submission that made
	// this attempt, when set.
	multitask MultitaskPolicy
	// keepCheckpoints: the run keeps its checkpoint history even with a
	// volatile store (MetaKeepCheckpoints).
	keepCheckpoints bool
	// createdTask says the submission that made this attempt created the
	// task: the task's transcript is the user message and then what finish
	// stores. freshContext says it also opened the context, with a message
	// the store holds as it is (storedAsIs): the context's transcript is
	// that message alone when the attempt starts (see history), and its
	// create may be deferred (deferrable).
	createdTask, freshContext bool
	// create is the task's deferred create (deferCreate), which the run's
	// first write stores and which holds the lease that write claims until
	// x takes it (leaseLocked); such an attempt takes no lease of its own.
	// It is set once, under mu, before created is closed.
	create *runlog.Create
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
	if !leased && x.create == nil {
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
		if _, err := r.commit(x.ctx, x.log, store.Change{UpdateTask: t}, statusEvent(StatusData{State: run.StateWorking})); err != nil {
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
		if lost := x.givenUp(); lost != nil {
			r.log.WarnContext(x.logContext(), "run abandoned", "run_id", x.runID, "err", lost)
			return
		}
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
	ctx, leave, err := x.enterCallTree(ctx)
	defer leave()
	if err != nil {
		return nil, err
	}
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
// and wall-time budget. Only the sooner of the two can pass first, so one
// deadline carries it, with that limit's cause.
func (x *execution) attemptContext() (context.Context, context.CancelFunc) {
	timeout, wall := x.agent.Timeout, x.agent.MaxWallTime
	switch {
	case wall > 0 && (timeout <= 0 || wall < timeout):
		return context.WithTimeoutCause(x.ctx, wall, &deadlineCause{runID: x.runID, agentID: x.agent.ID, d: wall, budget: true})
	case timeout > 0:
		return context.WithTimeoutCause(x.ctx, timeout, &deadlineCause{runID: x.runID, agentID: x.agent.ID, d: timeout})
	}
	return x.ctx, func() {}
}

// deadlineCause is why an attempt's deadline passed. Its message is written
// only when it is read: nearly every run ends long before its deadline.
type deadlineCause struct {
	runID, agentID string
	d              time.Duration
	budget         bool // the wall-time budget, not the timeout
}

func (c *deadlineCause) Error() string {
	if c.budget {
		return fmt.Sprintf("run %s ran longer than the agent's budget max_wall_time of %v", c.runID, c.d)
	}
	return fmt.Sprintf("run %s took longer than agent %s's timeout of %v", c.runID, c.agentID, c.d)
}

func (c *deadlineCause) ErrorClass() errdefs.Class {
	if c.budget {
		return errdefs.ClassBudgetExceeded
	}
	return errdefs.ClassTimeout
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
		return x.forkOptions(ctx, opts, n)
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
	if msgs, fork, err := x.forkHistory(ctx); fork {
		return msgs, err
	}
	if x.freshContext {
		x.firstSeeded[0] = x.user[0].ID
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
