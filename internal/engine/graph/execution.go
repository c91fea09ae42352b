package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// execution is one Execute call.
//
// Goroutines: Execute's own runs the top-level DAG; each running step has
// one (started by its scope, which waits for it before returning); watch
// forwards the host's interrupts. close stops watch and waits for it.
//
// Locks: mu guards results, stopped, intr and children; cpMu serialises
// checkpoint writes and is taken before mu, never while holding it.
type execution struct {
	e         *Engine
	ctx       context.Context // Execute's ctx
	runCtx    context.Context // ctx bounded by options.timeout, cancelled by abort
	cancelRun context.CancelFunc
	run       engine.Run
	host      engine.Host
	board     *engine.Board
	actor     string
	startedAt time.Time
	slots     chan struct{} // one per agent step allowed to run

	mu       sync.Mutex
	st       *state
	stopped  chan struct{} // closed once an interrupt stops the run
	intr     *engine.Interrupt
	children map[chan engine.Interrupt]struct{} // interrupt inboxes of running child runs
	aborted  error                              // the failure an abort strategy stopped the run for

	cpMu  sync.Mutex
	cpSeq int

	// coordWake wakes the coordinator when its mailbox receives a message
	// (nil without a coordinator); resumes serialises resumed steps.
	coordWake chan struct{}
	resumes   resumeLocks
	// turnsWarned: the coordinator's used-up turns were noted (under mu).
	turnsWarned bool

	watchDone chan struct{}
	stopWatch context.CancelFunc
}

func newExecution(ctx context.Context, e *Engine, run engine.Run, host engine.Host, board *engine.Board,
	st *state, startedAt time.Time) *execution {
	runCtx, cancel := context.WithCancel(ctx)
	if t := e.wf.Options.Timeout; t > 0 {
		runCtx, cancel = context.WithTimeout(ctx, time.Duration(t))
	}
	x := &execution{
		e: e, ctx: ctx, runCtx: runCtx, cancelRun: cancel, run: run, host: host, board: board,
		actor: e.actor(run), startedAt: startedAt, st: st,
		slots:    make(chan struct{}, e.cfg.MaxConcurrency),
		stopped:  make(chan struct{}),
		children: map[chan engine.Interrupt]struct{}{},
	}
	if e.coordinator != nil {
		x.coordWake = make(chan struct{}, 1)
	}
	watchCtx, stop := context.WithCancel(ctx)
	x.stopWatch, x.watchDone = stop, make(chan struct{})
	go x.watch(watchCtx, host.Interrupts())
	return x
}

func (x *execution) close() {
	x.stopWatch()
	<-x.watchDone
	x.cancelRun()
}

// watch turns the host's first interrupt into a stop of the whole run.
func (x *execution) watch(ctx context.Context, ch <-chan engine.Interrupt) {
	defer close(x.watchDone)
	select {
	case intr, ok := <-ch:
		if ok {
			x.interrupt(intr)
		}
	case <-ctx.Done():
	}
}

// interrupt stops the run for intr (the first one wins) and forwards it
// to every running child run, so that each stops cleanly.
func (x *execution) interrupt(intr engine.Interrupt) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.intr != nil {
		return
	}
	x.intr = &intr
	close(x.stopped)
	for ch := range x.children {
		select {
		case ch <- intr:
		default:
		}
	}
}

// stopErr returns why the run must stop now, or nil: an interrupt, the
// cancellation or deadline of Execute's ctx, the workflow timeout, or an
// abort.
func (x *execution) stopErr() error {
	x.mu.Lock()
	intr, aborted := x.intr, x.aborted
	x.mu.Unlock()
	switch {
	case intr != nil:
		return engine.Interrupted(*intr)
	case x.ctx.Err() != nil:
		return x.ctx.Err()
	case aborted != nil:
		return aborted
	case x.runCtx.Err() != nil:
		return errdefs.Timeoutf("workflow %q: timed out after %s", x.e.wf.Name, x.e.wf.Options.Timeout)
	}
	return nil
}

// abort stops every running step because of err (onStepFailure: abort).
func (x *execution) abort(err error) {
	x.mu.Lock()
	if x.aborted == nil {
		x.aborted = err
	}
	x.mu.Unlock()
	x.cancelRun()
}

// result returns the recorded result of a step, if any.
func (x *execution) result(id string) (*StepResult, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, ok := x.st.Results[id]
	return r, ok
}

// record stores a step's result and checkpoints.
func (x *execution) record(id string, r *StepResult) error {
	x.mu.Lock()
	x.st.Results[id] = r
	x.mu.Unlock()
	return x.checkpoint(checkpointStepPrefix + id)
}

// forget drops the results under a composite step before it is retried
// from the beginning.
func (x *execution) forget(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k := range x.st.Results {
		if strings.HasPrefix(k, id+"[") || strings.HasPrefix(k, id+"#") || strings.HasPrefix(k, id+".") {
			delete(x.st.Results, k)
		}
	}
}

// checkpoint writes the board and every result so far. A checkpoint the
// host fails to write fails the run: carrying on would let a crash re-run
// steps that already ran.
func (x *execution) checkpoint(step string) error {
	x.cpMu.Lock()
	defer x.cpMu.Unlock()
	x.mu.Lock()
	payload, err := json.Marshal(x.st)
	x.mu.Unlock()
	if err != nil {
		return errdefs.Internalf("workflow %q: encode checkpoint: %w", x.e.wf.Name, err)
	}
	x.cpSeq++
	cp := engine.Checkpoint{
		ExecID: x.run.ID, Step: step, Iteration: x.cpSeq, Board: x.board.Snapshot(), Payload: payload,
		Attributes: maps.Clone(x.run.Attributes), Timestamp: time.Now().UTC(),
		OriginalStartedAt: x.startedAt, SpecVersion: x.e.cfg.SpecVersion,
	}
	if err := x.host.Checkpoint(context.WithoutCancel(x.ctx), cp); err != nil {
		return fmt.Errorf("workflow %q: checkpoint after %s: %w", x.e.wf.Name, step, err)
	}
	return nil
}

// execute runs the whole workflow and decides its outcome.
func (x *execution) execute() error {
	if x.st.Request == "" {
		x.st.Request = lastUserText(x.board.Channel(engine.MainChannel))
	}
	x.publishPlan()
	top := &scope{wf: x.e.wf, steps: x.e.wf.Steps, request: x.st.Request}
	err := x.runSteps(top)
	if stop := x.stopErr(); stop != nil && !errdefs.IsTimeout(stop) {
		return stop
	}
	if err != nil {
		return err
	}
	if err := x.closeMail(); err != nil {
		return err
	}
	answer, outcome := x.scopeOutcome(top)
	if outcome != nil {
		outcome = errdefs.Internal(fmt.Errorf("workflow %q: %w", x.e.wf.Name, outcome))
	}
	if summary := x.summary(); summary != "" {
		// The summary is streamed like a step's answer: faces that show a
		// run's text as it streams show it last.
		answer = summary
		_ = x.host.Publish(x.ctx, engine.Token{Actor: x.actor, Text: summary})
	}
	if answer != "" {
		msg := model.NewText(model.RoleAssistant, answer)
		msg.ID, msg.Name, msg.CreatedAt = model.NewID(), x.actor, time.Now().UTC()
		x.board.AppendChannelMessage(engine.MainChannel, msg)
	}
	var partial *engine.Outcome
	if outcome == nil {
		partial = x.partialOutcome()
	}
	x.mu.Lock()
	x.st.Done = true
	if partial != nil {
		x.st.Partial = partial.Detail
	}
	x.mu.Unlock()
	if err := x.checkpoint(checkpointDone); err != nil {
		return err
	}
	if partial != nil {
		_ = x.host.Publish(x.ctx, *partial)
	}
	return outcome
}

// scopeOutcome is a finished scope's content — that of its steps nothing
// depends on that completed, in document order — and its failure: none
// when every step completed or was skipped by its condition; with
// skip-dependents, none as long as some step completed; otherwise an
// error naming the failed steps.
func (x *execution) scopeOutcome(sc *scope) (string, error) {
	depended := map[string]bool{}
	for _, s := range sc.steps {
		for _, d := range s.DependsOn {
			depended[d] = true
		}
	}
	var sinks, failed []string
	completed := 0
	for _, s := range sc.steps {
		r, _ := x.result(sc.id(s))
		if r == nil {
			continue
		}
		switch r.Status {
		case StepCompleted:
			completed++
			if !depended[s.ID] && r.Content != "" {
				sinks = append(sinks, s.ID)
			}
		case StepFailed:
			failed = append(failed, fmt.Sprintf("%s (%s)", sc.id(s), r.Error))
		}
	}
	var b strings.Builder
	for _, id := range sinks {
		r, _ := x.result(sc.prefix + id)
		if len(sinks) == 1 {
			b.WriteString(r.Content)
			break
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "## %s\n\n%s", id, r.Content)
	}
	if len(failed) == 0 || x.e.wf.Options.OnStepFailure == FailureSkipDependents && completed > 0 {
		return b.String(), nil
	}
	return b.String(), fmt.Errorf("step(s) failed: %s", strings.Join(failed, "; "))
}

// publishPlan announces the DAG in the run's plan event
// (engine.run.<run>.plan): every top-level step with its agent, its
// dependencies, its kind, and whether a resumed run has finished it.
func (x *execution) publishPlan() {
	type node struct {
		ID        string   `json:"id"`
		Agent     string   `json:"agent,omitempty"`
		DependsOn []string `json:"dependsOn,omitempty"`
		Kind      string   `json:"kind"`
		Done      bool     `json:"done,omitempty"`
	}
	plan := struct {
		Workflow string `json:"workflow"`
		Steps    []node `json:"steps"`
	}{Workflow: x.e.wf.Name}
	for _, s := range x.e.wf.Steps {
		_, done := x.result(s.ID)
		plan.Steps = append(plan.Steps, node{ID: s.ID, Agent: s.Agent, DependsOn: s.DependsOn, Kind: stepKind(s), Done: done})
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return
	}
	_ = x.host.Publish(x.ctx, engine.Plan{Actor: x.actor, Plan: b})
}

func stepKind(s *Step) string {
	switch {
	case s.Include != "":
		return "include"
	case s.Loop != nil && s.Loop.ForEach != nil:
		return "forEach"
	case s.Loop != nil:
		return "loop"
	}
	return "agent"
}

func lastUserText(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

// waitFor sleeps d unless the run stops first.
func (x *execution) waitFor(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-x.stopped:
		return x.stopErr()
	}
}

// isStop reports whether err means the run is stopping rather than the
// step failing.
func isStop(err error) bool {
	return errdefs.IsInterrupted(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
