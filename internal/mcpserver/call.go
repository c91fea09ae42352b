package mcpserver

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// call is one tools/call: a run started (or answered) through the runtime
// and followed until it ends or waits for the caller.
type call struct {
	s     *Server
	t     tool
	req   *mcp.CallToolRequest
	token any // the caller's progress token; nil: no progress wanted
	runID string
	// task is set when the client takes tasks: a run that outlasts
	// Options.TaskAfter or waits for input becomes one (tasks.go).
	task *taskSlot
}

func (s *Server) handler(t tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := &call{s: s, t: t, req: req, token: req.Params.GetProgressToken(), task: taskSlotFrom(ctx)}
		if req.Params.RequestState != "" {
			return c.retry(ctx)
		}
		a, err := parseArgs(req.Params.Arguments)
		if err != nil {
			return toolError(err), nil
		}
		msg, err := a.message()
		if err != nil {
			return toolError(err), nil
		}
		return c.send(ctx, runtime.SendRequest{AgentID: t.agentID, ContextID: a.ContextID, TaskID: a.RunID, Message: msg})
	}
}

// send submits the message and returns the call's result once the run
// ends or waits for input — answered here by elicitation when the client
// can be asked.
func (c *call) send(ctx context.Context, req runtime.SendRequest) (*mcp.CallToolResult, error) {
	for {
		task, msgs, err := c.submit(ctx, req)
		if errors.Is(err, errBecomesTask) || err == nil && c.task != nil && task.State == run.StateInputRequired {
			c.task.runID = c.runID // taskMiddleware answers the task handle
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
		}
		if err != nil {
			return c.failed(ctx, err)
		}
		if task.State != run.StateInputRequired || !c.canElicit() {
			return c.result(task, msgs), nil
		}
		if c.multiRoundTrip() {
			return inputRequest(task), nil
		}
		answer, err := c.elicit(ctx, task)
		if err != nil {
			return c.failed(ctx, err)
		}
		if answer == nil { // declined: the run is canceled
			return c.cancel(ctx)
		}
		req = runtime.SendRequest{AgentID: c.t.agentID, TaskID: task.ID, Message: *answer}
	}
}

// submit sends req and waits for the run to end or wait for input,
// streaming progress when the caller asked for it. For a client that
// takes tasks the wait ends after Options.TaskAfter (errBecomesTask).
func (c *call) submit(ctx context.Context, req runtime.SendRequest) (run.Task, []model.Message, error) {
	req.Await = runtime.AwaitEnd
	if c.token != nil {
		req.Await = runtime.AwaitStream
	}
	sub, err := c.s.rt.Send(ctx, req)
	if err != nil {
		return run.Task{}, nil, err
	}
	c.runID = sub.Task.ID
	wait := ctx
	if c.task != nil {
		var stop context.CancelFunc
		wait, stop = context.WithTimeout(ctx, c.s.opts.TaskAfter)
		defer stop()
	}
	task, msgs, err := c.await(ctx, wait, sub)
	if err != nil && c.task != nil && ctx.Err() == nil && wait.Err() != nil {
		err = errBecomesTask
	}
	return task, msgs, err
}

// await waits (with wait) for the submitted run to end or wait for input,
// its task durable before anything is answered.
func (c *call) await(ctx, wait context.Context, sub runtime.Submission) (run.Task, []model.Message, error) {
	if c.token == nil {
		if err := sub.Durable(ctx); err != nil {
			return run.Task{}, nil, err
		}
		return c.s.rt.WaitView(wait, sub.Task.ID)
	}
	// Opened before anything waits, so that the run's log stays here for
	// it (as the REST stream does).
	st, err := c.s.rt.OpenStream(ctx, sub.Task.ID, sub.StartSeq)
	if err != nil {
		return run.Task{}, nil, err
	}
	defer st.Close()
	if err := sub.Durable(ctx); err != nil {
		return run.Task{}, nil, err
	}
	c.notify(ctx, float64(sub.StartSeq), "run "+sub.Task.ID+" started")
	if err := c.followProgress(wait, st); err != nil {
		return run.Task{}, nil, err
	}
	return c.s.rt.WaitView(wait, sub.Task.ID)
}

// failed is the answer to a call that could not go on: a caller that
// cancelled cancels its run; any other error is a tool error.
func (c *call) failed(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	if ctx.Err() != nil {
		if c.runID != "" && c.callerCancelled(ctx) {
			c.cancelRun(ctx)
		}
		return nil, ctx.Err()
	}
	var ae *argError
	if errors.As(err, &ae) {
		return toolError(err), nil
	}
	return c.runError(err), nil
}

// callerCancelled reports whether the call's context ended because its
// caller cancelled it: notifications/cancelled, or (2026-07-28) closing
// the request, both plain cancellations. A connection that fails ends
// calls with its own cause, and a draining server leaves its runs to
// recovery: those runs go on, reachable by their run ids.
func (c *call) callerCancelled(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), context.Canceled) && !c.s.rt.Draining()
}

// cancelRun cancels the call's run, detached from the call's context,
// which has ended.
func (c *call) cancelRun(ctx context.Context) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	if _, err := c.s.rt.Cancel(ctx, c.runID); err != nil {
		c.s.opts.Logger.Warn("mcp: cancel a run whose call was cancelled", "run", c.runID, "err", err)
	}
}

// cancel cancels the run and answers its final state.
func (c *call) cancel(ctx context.Context) (*mcp.CallToolResult, error) {
	if _, err := c.s.rt.Cancel(ctx, c.runID); err != nil {
		return c.failed(ctx, err)
	}
	task, msgs, err := c.s.rt.WaitView(ctx, c.runID)
	if err != nil {
		return c.failed(ctx, err)
	}
	return c.result(task, msgs), nil
}

// canElicit reports whether the client declared elicitation.
func (c *call) canElicit() bool {
	caps := c.req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

// multiRoundTrip reports whether the client speaks the sessionless
// protocol, where a server asks by returning input requests the client
// answers in a retry of the call (SEP-2322), not with a request of its own.
func (c *call) multiRoundTrip() bool {
	return c.req.ProtocolVersion() >= sessionlessVersion
}
