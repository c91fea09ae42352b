package runtime

import (
	"cmp"
	"context"
	"crypto/sha1"
	"errors"
	"time"

	"github.com/google/uuid"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// Child runs (engine.ChildRunner): a workflow step runs as a run of its
// own. A child is a task of the parent's agent in a context of its own,
// linked to its parent by task metadata (engine.MetaParentRunID,
// engine.MetaParentStep), whose id derives from the parent's id and the
// child's key — so a parent resumed on any replica finds its children
// again. The child's log gets run.start, status and run.end of each of its
// attempts and every event its engine publishes; each of those also goes,
// nested under the parent's step, to the parent (ChildRun.Host). Its
// checkpoints are saved under its own id; its transcript — the step's
// prompt and the messages its engine added — is stored when it completes.
//
// A child holds no lease and is not registered among the runtime's runs:
// the parent's lease covers it and only the parent's engine drives it. A
// cancel reaches it through the parent (ChildRun.Host's interrupts). A
// child that stopped without ending (a crash, a drain, its parent parked
// for input) stays working with its checkpoint, and the parent's next
// attempt resumes it; one that failed or was canceled is kept as it ended,
// and the key's next child (the next generation) starts afresh.

// maxChildGenerations bounds how many children one key may start.
const maxChildGenerations = 1000

// RunChild runs eng as the child run c of this attempt's run.
func (h *host) RunChild(ctx context.Context, c engine.ChildRun, eng engine.Engine, board *engine.Board) (*engine.Board, error) {
	return h.runChild(ctx, nil, c, eng, board)
}

// runChild runs the child c of this attempt's run, which spends from
// within (nil: the run's own budgets) and gives the child its share
// (budget_share.go).
func (h *host) runChild(ctx context.Context, within *budgetShare, c engine.ChildRun, eng engine.Engine, board *engine.Board) (*engine.Board, error) {
	if board == nil {
		board = engine.NewBoard()
	}
	if c.Cancel {
		return h.x.r.cancelChild(ctx, h.x, c, eng, board)
	}
	ctx, err := enterChild(ctx, c)
	if err != nil {
		return board, err
	}
	left := h.x.left(ctx, within)
	x, done, err := h.x.r.openChild(ctx, h.x, c, board, left)
	if err != nil || done != nil {
		if done == nil {
			done = board
		}
		return done, err
	}
	defer x.closeChild()
	out, err := x.runChild(ctx, c, eng, board, x.share(h.x.runID, left))
	var spent *shareSpent
	if errors.As(err, &spent) && spent.child == x.runID {
		err = overShare(spent)
	}
	return out, err
}

// share is the child's budget share: what it spent before (a resumed
// child) and its agent's child_share of what its parent has left.
func (x *execution) share(parent string, left budgetLeft) *budgetShare {
	frac := x.agent.ChildBudgetShare
	if frac <= 0 || frac > 1 {
		frac = 1
	}
	x.mu.Lock()
	used, byModel := x.task.Usage, x.task.ModelUsage
	x.mu.Unlock()
	spent := x.r.spent(byModel)
	return shareOf(parent, left, frac, used, spent)
}

// childRunID names generation gen of parent's child key: a UUIDv7 with
// the parent's time (when the parent's id is one) and the rest drawn from
// a hash of parent, key and generation.
func childRunID(parentID, key string, gen int) string {
	sum := sha1.Sum([]byte(parentID + "\x00" + key + "\x00" + itoa(gen)))
	var u uuid.UUID
	copy(u[:], sum[:16])
	if p, err := uuid.Parse(parentID); err == nil && p.Version() == 7 {
		copy(u[:6], p[:6])
	}
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

// openChild finds or creates the child for c.Key and makes it an attempt
// ready to execute. A child that completed earlier needs no attempt: its
// final board, rebuilt from its transcript, is returned instead. A new
// child is refused while the parent has nothing left to spend.
func (r *Runtime) openChild(ctx context.Context, p *execution, c engine.ChildRun, board *engine.Board, left budgetLeft) (*execution, *engine.Board, error) {
	id, t, found, err := r.findChild(ctx, p.runID, c.Key)
	switch {
	case err != nil:
		return nil, nil, err
	case !found:
		if what := left.spent(); what != "" {
			return nil, nil, errdefs.BudgetExceededf("run %s has spent its budget of %s: %s is not started", p.runID, what, cmp.Or(c.Step, c.Key))
		}
		x, err := r.createChild(ctx, p, c, id, board)
		return x, nil, err
	case t.State == run.StateCompleted:
		b, err := r.childBoard(ctx, t)
		return nil, b, err
	}
	x, err := r.resumeChild(ctx, p, t)
	return x, nil, err
}

// cancelChild resumes the unfinished child of c.Key, if any, with
// SignalCancel (engine.ChildRun.Cancel): its engine cancels what it left
// waiting and the child ends.
func (r *Runtime) cancelChild(ctx context.Context, p *execution, c engine.ChildRun, eng engine.Engine, board *engine.Board) (*engine.Board, error) {
	_, t, found, err := r.findChild(ctx, p.runID, c.Key)
	if err != nil || !found || t.State.Terminal() {
		return board, err
	}
	x, err := r.resumeChild(engine.WithResumeContext(ctx, engine.ResumeContext{Signal: engine.SignalCancel}), p, t)
	if err != nil {
		return board, err
	}
	defer x.closeChild()
	return x.runChild(ctx, c, eng, board, nil)
}

// findChild returns the child of parent's key that openChild opens now:
// the first generation that did not fail or get canceled, its task if it
// exists (found).
func (r *Runtime) findChild(ctx context.Context, parentID, key string) (id string, t run.Task, found bool, err error) {
	for gen := range maxChildGenerations {
		id = childRunID(parentID, key, gen)
		t, err = r.st.GetTask(ctx, id)
		switch {
		case errdefs.IsNotFound(err):
			return id, run.Task{}, false, nil
		case err != nil:
			return "", run.Task{}, false, err
		case !t.State.Terminal() || t.State == run.StateCompleted:
			return id, t, true, nil
		}
	}
	return "", run.Task{}, false, errdefs.Internalf("run %s: key %q started %d child runs", parentID, key, maxChildGenerations)
}

// childID is the id of the child openChild opens now for parent's key.
func (r *Runtime) childID(ctx context.Context, parentID, key string) (string, error) {
	id, _, _, err := r.findChild(ctx, parentID, key)
	return id, err
}

// newChild is the attempt of child task t of parent p.
func (r *Runtime) newChild(p *execution, t run.Task, l *runlog.Log, resume string) *execution {
	x := &execution{
		r: r, runID: t.ID, contextID: t.ContextID, tenant: p.tenant, agent: p.agent, log: l, task: t,
		resume: resume, bg: p.bg,
	}
	x.host = host{x: x}
	if l != nil {
		l.SetTenant(p.tenant)
	}
	return x
}

// createChild stores a new child task, working, with the board's main
// channel as the first messages of its transcript.
func (r *Runtime) createChild(ctx context.Context, p *execution, c engine.ChildRun, id string, board *engine.Board) (*execution, error) {
	now := time.Now().UTC()
	t := run.Task{
		ID: id, ContextID: newID(), AgentID: cmp.Or(c.AgentID, p.agent.ID), State: run.StateWorking, Attempt: 1,
		Metadata:  map[string]any{engine.MetaParentRunID: p.runID, engine.MetaParentStep: c.Step},
		CreatedAt: now, UpdatedAt: now,
	}
	seed := board.Channel(engine.MainChannel)
	msgs := make([]run.Message, len(seed))
	x := r.newChild(p, t, nil, "")
	for i, m := range seed {
		if m.ID == "" {
			m.ID = messageID(id, i)
		}
		m.CreatedAt = store.StoredTime(now)
		seed[i] = m
		msgs[i] = run.Message{ContextID: t.ContextID, TaskID: id, Message: m}
		x.seeded = append(x.seeded, m.ID)
	}
	board.SetChannel(engine.MainChannel, seed)
	l := r.logs.New(id)
	if err := r.logs.Register(l); err != nil {
		return nil, errdefs.Conflictf("child run %s of run %s: a log of that id is open", id, p.runID)
	}
	l.SetTenant(p.tenant)
	x.log = l
	_, err := r.commit(p.bg, l, store.Change{TaskID: id, CreateTask: &x.task, Messages: msgs},
		runStartEvent(RunStartData{ContextID: t.ContextID, AgentID: t.AgentID, Attempt: 1}),
		statusEvent(StatusData{State: run.StateWorking}))
	if err != nil {
		x.closeChild()
		return nil, err
	}
	x.task.Version = 1
	return x, nil
}

// resumeChild opens a new attempt of an unfinished child task t.
func (r *Runtime) resumeChild(ctx context.Context, p *execution, t run.Task) (*execution, error) {
	l, err := r.logs.Activate(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	signal := engine.SignalCrash
	if rc, ok := engine.ResumeContextFromContext(ctx); ok && rc.Signal != "" {
		signal = rc.Signal
	}
	next := t
	next.State, next.Attempt, next.UpdatedAt = run.StateWorking, t.Attempt+1, time.Now().UTC()
	x := r.newChild(p, next, l, signal)
	var evs []runlog.Entry
	if !r.attemptClosed(ctx, t.ID) {
		evs = append(evs, runEndEvent(RunEndData{State: run.StateWorking, Usage: t.Usage,
			Error: &run.TaskError{Class: string(errdefs.ClassAborted), Message: "the parent run's attempt ended before this child's"}}))
	}
	evs = append(evs,
		runStartEvent(RunStartData{ContextID: t.ContextID, AgentID: t.AgentID, Attempt: next.Attempt, Resumed: signal}),
		statusEvent(StatusData{State: run.StateWorking}))
	if _, err := r.commit(p.bg, l, store.Change{UpdateTask: &x.task}, evs...); err != nil {
		x.closeChild()
		return nil, err
	}
	x.task.Version++
	return x, nil
}

// childBoard rebuilds a completed child's final board from its transcript.
func (r *Runtime) childBoard(ctx context.Context, t run.Task) (*engine.Board, error) {
	page, err := r.st.ListMessages(ctx, run.MessageQuery{ContextID: t.ContextID, Last: 1000})
	if err != nil {
		return nil, err
	}
	msgs := make([]model.Message, len(page.Messages))
	for i, m := range page.Messages {
		msgs[i] = m.Message
	}
	b := engine.NewBoard()
	b.SetChannel(engine.MainChannel, msgs)
	return b, nil
}

// runChild executes the child's attempt and records how it ended.
func (x *execution) runChild(ctx context.Context, c engine.ChildRun, eng engine.Engine, board *engine.Board, share *budgetShare) (*engine.Board, error) {
	run := c.Run
	run.ID, run.ResumeFrom = x.runID, nil
	rc := engine.ResumeContext{Attempt: x.task.Attempt, StartedAt: x.task.CreatedAt, Signal: x.resume}
	if x.resume != "" && engine.CapabilitiesOf(eng).SupportsResume {
		cp, err := x.r.st.LoadCheckpoint(ctx, x.runID)
		if err != nil {
			x.endChild(nil, err)
			return board, err
		}
		if cp != nil {
			run.ResumeFrom = cp
			rc.CheckpointAt, rc.Step = cp.Timestamp, cp.Step
		}
	}
	ctx = engine.WithResumeContext(ctx, rc)
	h := &childHost{rt: &x.host, out: c.Host, held: heldMessageIDs(run.ResumeFrom), share: share}
	out, err := executeGuarded(ctx, eng, run, h, board)
	if out == nil {
		out = board
	}
	if ferr := x.endChild(out, err); ferr != nil && err == nil {
		err = ferr
	}
	return out, err
}

// executeGuarded turns an engine's panic into an error.
func executeGuarded(ctx context.Context, eng engine.Engine, run engine.Run, h engine.Host, b *engine.Board) (out *engine.Board, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, errdefs.Internalf("child run %s: engine %T panicked: %v", run.ID, eng, v)
		}
	}()
	return eng.Execute(ctx, run, h, b)
}

// childState is the state a child's attempt ends in: completed, canceled
// when the run was canceled, working (to be resumed) when it merely
// stopped — a drain, a park for input — and failed otherwise.
func childState(err error) run.TaskState {
	var ie engine.InterruptedError
	switch {
	case err == nil:
		return run.StateCompleted
	case errors.As(err, &ie):
		if ie.Interrupt.Cause == engine.CauseUserCancel || ie.Interrupt.Cause == engine.CauseUserInput {
			return run.StateCanceled
		}
		return run.StateWorking
	case errors.Is(err, context.Canceled):
		return run.StateCanceled
	}
	return run.StateFailed
}

// endChild records the end of the child's attempt in one commit: state,
// usage, artifacts, the transcript messages of a completed child, status
// and run.end. A child that stays working has its held checkpoint stored.
func (x *execution) endChild(out *engine.Board, runErr error) error {
	state := childState(runErr)
	t := &x.task
	t.State, t.UpdatedAt = state, time.Now().UTC()
	x.mu.Lock()
	t.Usage = t.Usage.Add(x.usage)
	t.ModelUsage = mergeModelUsage(t.ModelUsage, x.modelUsage)
	if len(x.artifacts) > 0 {
		t.Artifacts = mergeArtifacts(t.Artifacts, x.artifacts)
	}
	x.mu.Unlock()
	var msgs []run.Message
	var evs []runlog.Entry
	switch state {
	case run.StateCompleted:
		var err error
		if msgs, err = x.newMessages(out); err != nil {
			return err
		}
		evs = append(evs, statusEvent(StatusData{State: state}))
	case run.StateWorking:
		if err := x.writeHeldCheckpoint(); err != nil {
			return err
		}
	default:
		o := x.failure(runErr)
		if state == run.StateCanceled {
			o.err = nil
		}
		t.Error = o.err
		evs = append(evs, statusEvent(StatusData{State: state, Error: o.err}))
	}
	evs = append(evs, runEndEvent(RunEndData{State: state, Error: t.Error, Usage: t.Usage}))
	x.host.mu.Lock()
	x.host.ended = true
	x.host.mu.Unlock()
	if _, err := x.r.commit(x.bg, x.log, store.Change{UpdateTask: t, Messages: msgs}, evs...); err != nil {
		return err
	}
	t.Version++
	if state.Terminal() {
		x.log.End()
	}
	return nil
}

// closeChild lets go of the child's log.
func (x *execution) closeChild() {
	if x.log == nil {
		return
	}
	x.log.Deactivate()
	x.r.logs.Release(x.log)
}

// childHost is the engine.Host of a child's attempt: events go to the
// child's log and to the parent's side, checkpoints and usage are the
// child's (usage also reaches the parent, counted in its totals, and the
// child's share judges it: budget_share.go), and
// interrupts and questions come and go through the parent's side.
type childHost struct {
	rt  *host
	out engine.Host
	// held: the ids of the messages the child's resumed checkpoint holds.
	held  []string
	share *budgetShare // nil: unbounded
}

var (
	_ engine.Host        = (*childHost)(nil)
	_ engine.ChildRunner = (*childHost)(nil)
	_ engine.ChildRunner = (*host)(nil)

	_ engine.CheckpointedPublisher = (*childHost)(nil)
	_ engine.EffectLedger          = (*childHost)(nil)
)

func (h *childHost) Publish(ctx context.Context, ev engine.Event) error {
	err := h.rt.Publish(ctx, ev)
	if oerr := h.out.Publish(ctx, ev); err == nil {
		err = oerr
	}
	return err
}

// PublishCheckpointed logs ev with cp in the child's log
// (engine.CheckpointedPublisher) and passes ev to the parent's side.
func (h *childHost) PublishCheckpointed(ctx context.Context, ev engine.Event, cp engine.Checkpoint) error {
	err := h.rt.PublishCheckpointed(ctx, ev, cp)
	if oerr := h.out.Publish(ctx, ev); err == nil {
		err = oerr
	}
	return err
}

// PriorEffects and CommitEffects keep the child's effect ledger in the
// child's own log, as a top-level run's: a step's tool calls are recorded,
// keyed and resolved on resume like any other (effects.go).
func (h *childHost) PriorEffects(ctx context.Context) (map[string]engine.EffectRecord, error) {
	return h.rt.PriorEffects(ctx)
}

func (h *childHost) CommitEffects(ctx context.Context, cp *engine.Checkpoint, evs ...engine.Effect) error {
	return h.rt.CommitEffects(ctx, cp, evs...)
}

func (h *childHost) Interrupts() <-chan engine.Interrupt { return h.out.Interrupts() }

func (h *childHost) AskUser(ctx context.Context, p engine.UserPrompt) (engine.UserReply, error) {
	return h.out.AskUser(ctx, p)
}

func (h *childHost) Checkpoint(ctx context.Context, cp engine.Checkpoint) error {
	return h.rt.Checkpoint(ctx, cp)
}

// ReportUsage counts usage as the child's, judges it by the child's
// share, and passes it up: a child's tokens are its parent's too.
func (h *childHost) ReportUsage(ctx context.Context, modelName string, u model.TokenUsage) error {
	x := h.rt.x
	x.mu.Lock()
	x.usage = x.usage.Add(u)
	x.modelUsage = addModelUsage(x.modelUsage, modelName, u)
	used := x.task.Usage.Add(x.usage)
	var byModel map[string]model.TokenUsage
	if h.share != nil && h.share.cost >= 0 {
		byModel = mergeModelUsage(x.task.ModelUsage, x.modelUsage)
	}
	x.mu.Unlock()
	var err error
	if h.share != nil {
		err = h.share.check(x.runID, used, x.r.spent(byModel))
	}
	if uerr := h.out.ReportUsage(withChildCharge(ctx), modelName, u); err == nil {
		err = uerr
	}
	return err
}

// RunChild runs a grandchild: a child of this child, spending from its
// share.
func (h *childHost) RunChild(ctx context.Context, c engine.ChildRun, eng engine.Engine, board *engine.Board) (*engine.Board, error) {
	return h.rt.runChild(ctx, h.share, c, eng, board)
}
