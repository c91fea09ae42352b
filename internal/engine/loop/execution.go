package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// execution is the state of one Execute call. Only the Execute goroutine
// touches it.
type execution struct {
	e *Engine
	// ctx is Execute's context; work is ctx cancelled also by an
	// interrupt, for model streams and tools.
	ctx       context.Context
	work      interruptible
	run       engine.Run
	host      engine.Host
	board     *engine.Board
	actor     string
	startedAt time.Time
	// schemaTries counts final answers the response schema refused.
	schemaTries int
	// toolCalls counts the run's tool calls (a resumed attempt starts
	// from those its board records), for Config.MaxToolCalls.
	toolCalls int
	// waiting is the approval the attempt resumes waiting for, if any.
	waiting *pending
	// finish is the finish reason of the latest model turn;
	// lengthCompacted says a cut answer made the history compact (finish.go).
	finish          string
	lengthCompacted bool
	// choice is the run's tool choice (choice.go).
	choice llm.ToolChoice
	// cm sizes the requests against the context window (context.go).
	cm contextState
	// client are the client's tools the run's user offers (clienttools.go).
	client map[string]engine.ClientTool
}

// loop runs iterations first … MaxIterations.
func (x *execution) loop(first int) error {
	x.refreshClientTools()
	if rc, ok := engine.ResumeContextFromContext(x.ctx); ok && rc.Signal == engine.SignalCancel {
		return x.cancelParked(first - 1)
	}
	if x.waiting == nil && first > 1 {
		if err := x.resumeParked(first - 1); err != nil {
			return err
		}
	}
	if x.waiting == nil && first > 1 && answered(x.board.ChannelView(engine.MainChannel)) {
		return nil // resumed from the checkpoint of the final answer
	}
	x.toolCalls = callsSinceUser(x.board.ChannelView(engine.MainChannel))
	limit := x.e.cfg.MaxIterations
	for n := first; n <= limit; n++ {
		if err := firstErr(x.stopped(), engine.PauseRequested(x.host)); err != nil {
			return err
		}
		var done bool
		var err error
		if p := x.waiting; p != nil {
			x.waiting = nil // resumed waiting for approvals: the turn was taken
			x.toolCalls += len(p.Gates)
			err = x.settle(n, p)
		} else {
			done, err = x.iterate(n)
		}
		if err != nil || done {
			return err
		}
	}
	return errdefs.BudgetExceededf("loop agent %q: reached max_iterations %d without a final answer", x.actor, limit)
}

// iterate runs iteration n: a model turn, then its tool calls. done says
// the run ends here (a final answer, or err).
func (x *execution) iterate(n int) (done bool, err error) {
	x.takeFeedback()
	msg, usage, err := x.modelTurn(n)
	if err != nil {
		if !usage.IsZero() {
			_ = x.reportUsage(n, usage) // the run fails anyway; the host still counts the cost
		}
		return true, err
	}
	budget := x.reportUsage(n, usage)
	calls := msg.ToolCalls()
	if len(calls) == 0 {
		if cont, err := x.checkFinish(n, msg); err != nil || cont {
			if err != nil {
				return true, err
			}
			return false, firstErr(budget, x.stopped(), x.checkpoint(n))
		}
		x.appendMessage(x.joinContinued(msg))
		if x.e.schema != nil && budget == nil {
			retry, err := x.structured()
			if err != nil {
				return true, err
			}
			if retry {
				return false, firstErr(x.stopped(), x.checkpoint(n))
			}
		}
		// A complete answer stands even if an interrupt raced its
		// last chunk: there is nothing left to stop.
		return true, firstErr(budget, x.finalCheckpoint(n))
	}
	// A spent budget or an interrupt before dispatch answers the calls
	// without running them, so the transcript stays well formed.
	x.toolCalls += len(calls)
	if lim := x.e.cfg.MaxToolCalls; lim > 0 && x.toolCalls > lim && budget == nil {
		// The whole batch is answered unrun: running the calls within the
		// budget of a batch the model meant as one would do half of its
		// intent, in a run that fails anyway.
		budget = errdefs.BudgetExceededf("loop agent %q: %d tool calls, over the budget max_tool_calls_per_run of %d", x.actor, x.toolCalls, lim)
	}
	if halt := firstErr(budget, x.stopped()); halt != nil {
		x.appendMessage(msg)
		x.abandonCalls(calls, halt)
		return true, firstErr(budget, x.stopped(), x.checkpoint(n))
	}
	return false, x.settle(n, &pending{Iteration: n, Message: msg, Gates: x.vet(n, calls), Since: x.e.cfg.Now().UTC()})
}

// stopped returns the reason to stop — the interrupt received, or ctx's
// error — or nil to carry on. An interrupt wins over a cancellation that
// raced it, since the host asked for it first.
func (x *execution) stopped() error {
	if intr, ok := x.work.interrupt(); ok {
		return engine.Interrupted(intr)
	}
	return x.ctx.Err()
}

// reportUsage hands turn n's usage to the host. Only a BudgetExceeded
// answer matters: it stops the run. Anything else is the host's
// observability problem.
func (x *execution) reportUsage(n int, usage model.TokenUsage) error {
	err := x.host.ReportUsage(x.ctx, x.e.cfg.Model, usage)
	if errdefs.IsBudgetExceeded(err) {
		return fmt.Errorf("loop agent %q: after model turn %d: %w", x.actor, n, err)
	}
	return nil
}

// checkpoint records iteration n, whose messages are all on the board.
// A cancelled ctx writes none: the attempt is being torn down and the
// previous checkpoint still describes a consistent board. A failed write
// fails the run, since continuing without it would let a crash replay
// tool calls that already ran.
func (x *execution) checkpoint(n int) error { return x.checkpointWith(n, nil) }

// finalCheckpoint records iteration n, a final answer: the run ends next,
// and no tool runs in between, so a host that can stages the checkpoint to
// be saved with the run's end (engine.CheckpointStager) — after a crash
// before that, the answer is asked for again.
func (x *execution) finalCheckpoint(n int) error {
	stager, ok := x.host.(engine.CheckpointStager)
	if !ok {
		return x.checkpoint(n)
	}
	cp, err := x.snapshot(n, nil)
	if err != nil {
		return err
	}
	if err := stager.StageCheckpoint(x.ctx, cp); err != nil {
		return fmt.Errorf("loop agent %q: checkpoint after iteration %d: %w", x.actor, n, err)
	}
	return nil
}

// checkpointWith records iteration n with payload p (nil: none).
func (x *execution) checkpointWith(n int, p *checkpointPayload) error {
	cp, err := x.snapshot(n, p)
	if err != nil {
		return err
	}
	if err := x.host.Checkpoint(x.ctx, cp); err != nil {
		return fmt.Errorf("loop agent %q: checkpoint after iteration %d: %w", x.actor, n, err)
	}
	return nil
}

// snapshot is the checkpoint of iteration n with payload p (nil: none).
func (x *execution) snapshot(n int, p *checkpointPayload) (engine.Checkpoint, error) {
	if x.ctx.Err() != nil {
		return engine.Checkpoint{}, x.ctx.Err()
	}
	cp := engine.Checkpoint{
		ExecID:            x.run.ID,
		Step:              iterationStep(n),
		Iteration:         n,
		Board:             x.board.Snapshot(),
		Attributes:        maps.Clone(x.run.Attributes),
		Timestamp:         time.Now().UTC(),
		OriginalStartedAt: x.startedAt,
		SpecVersion:       x.e.cfg.SpecVersion,
	}
	if p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return engine.Checkpoint{}, fmt.Errorf("loop agent %q: checkpoint of iteration %d: %w", x.actor, n, err)
		}
		cp.Payload = b
	}
	return cp, nil
}

// appendMessage stamps msg with a fresh id, its time and author, and
// appends it to the main channel.
func (x *execution) appendMessage(msg model.Message) {
	msg.ID = x.e.cfg.NewMessageID()
	msg.CreatedAt = time.Now().UTC()
	if msg.Name == "" && msg.Role == model.RoleAssistant {
		msg.Name = x.actor
	}
	x.board.AppendChannelMessage(engine.MainChannel, msg)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// callsSinceUser counts the tool calls the assistant made after the last
// user message: the run's so far, when an attempt resumes from a board.
func callsSinceUser(msgs []model.Message) int {
	n := 0
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != model.RoleUser; i-- {
		n += len(msgs[i].ToolCalls())
	}
	return n
}
