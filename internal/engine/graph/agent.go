package graph

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// AttrStep is the child run attribute naming the workflow step it runs.
const AttrStep = "graph.step"

// runAgent runs one agent step as a child run: the agent's engine, a
// fresh board holding the step's prompt as the user's message, and a
// childHost. When the host is an engine.ChildRunner, the child is a run of
// its own there (its own id, transcript and checkpoints, keyed by the
// step's id and attempt so that a resumed workflow resumes it); otherwise
// it runs here, under the childHost. It waits for one of the run's agent
// slots first (maxConcurrency). The content is the text of the assistant
// messages the child produced; with a resultSchema, the result is its
// first valid submit_result call.
func (x *execution) runAgent(ctx context.Context, sc *scope, s *Step, id string, attempt int,
	agentName, modelName, prompt string) (_ *StepResult, err error) {
	eng := x.e.engines[agentKey{agentName, modelName}]
	if eng == nil {
		return nil, errdefs.Internalf("step %q: agent %q (model %q) was not resolved", id, agentName, modelName)
	}
	select {
	case x.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-x.stopped:
		return nil, x.stopErr()
	}
	defer func() { <-x.slots }()

	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, prompt))
	key := id + "/" + strconv.Itoa(attempt)
	ctx = withStep(ctx, x, id, agentName)
	out, usage, err := x.runChild(ctx, eng, id, key, board)
	msgs := out.ChannelFrom(engine.MainChannel, 1)
	r := &StepResult{Content: contentOf(msgs), Usage: usage}
	if err != nil {
		return r, err
	}
	x.keepTranscript(id, out.Channel(engine.MainChannel))
	result, err := submittedResult(sc.wf.Agents[agentName], msgs)
	if err != nil {
		return r, err
	}
	r.Result = result
	return r, nil
}

// runOn runs eng on board as a child run of the workflow keyed key, whose
// agent reads mailbox's messages, and marks those it read delivered when
// it succeeds. The tools its agent calls act as mailbox's.
func (x *execution) runOn(ctx context.Context, eng engine.Engine, mailbox, agent, key string, board *engine.Board) (*engine.Board, error) {
	out, _, err := x.runChild(withStep(ctx, x, mailbox, agent), eng, mailbox, key, board)
	return out, err
}

// runChild runs eng on board as the child run key of step id (its host a
// childHost offering id's mailbox) and returns its final board and usage.
// The messages the child read are delivered once it succeeds.
func (x *execution) runChild(ctx context.Context, eng engine.Engine, id, key string, board *engine.Board) (*engine.Board, model.TokenUsage, error) {
	if eng == nil {
		return board, model.TokenUsage{}, errdefs.Internalf("step %q: no engine", id)
	}
	h := x.newChildHost(id)
	defer h.release()
	attrs := maps.Clone(x.run.Attributes)
	if attrs == nil {
		attrs = map[string]string{}
	}
	attrs[AttrStep] = id
	run := engine.Run{ID: x.run.ID + "/" + key, ParentRunID: x.run.ID, Attributes: attrs, Deps: x.run.Deps}
	out, err := x.executeChild(ctx, eng, engine.ChildRun{Key: key, Step: id, Run: run, Host: h}, board)
	if out == nil {
		out = board
	}
	if err == nil {
		x.delivered(id, h.taken())
	}
	return out, h.total(), err
}

// executeChild runs the child through the host's engine.ChildRunner, or
// here under c.Host, turning a child engine's panic into a step failure.
func (x *execution) executeChild(ctx context.Context, eng engine.Engine, c engine.ChildRun, b *engine.Board) (out *engine.Board, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, errdefs.Internalf("step run %q: engine %T panicked: %v", c.Run.ID, eng, v)
		}
	}()
	if cr, ok := x.host.(engine.ChildRunner); ok {
		out, err = cr.RunChild(ctx, c, eng, b)
	} else {
		out, err = eng.Execute(ctx, c.Run, c.Host, b)
	}
	if err != nil && !isStop(err) {
		err = fmt.Errorf("agent run %q: %w", c.Run.ID, err)
	}
	return out, err
}
