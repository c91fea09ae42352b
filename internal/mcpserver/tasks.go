package mcpserver

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// Tasks: the MCP tasks extension (io.modelcontextprotocol/tasks, SEP-2663,
// for 2026-07-28 clients) over agentd's runs. A client that declares the
// extension in a tools/call's capabilities gets the ordinary result when
// the run ends within Options.TaskAfter, and otherwise — or when the run
// asks for input — a task handle (resultType "task") whose id is the run
// id. tasks/get polls it (the final CallToolResult inlined once the run
// ended; the prompt as inputRequests while it waits), tasks/update answers
// its prompt, tasks/cancel cancels the run. A task is a run: durable, any
// replica answers for it, kept as long as retention keeps the run (ttlMs
// null), in the caller's tenant. go-sdk v1.8.0 has no tasks of its own; the
// three methods are served through its custom-method hook
// (mcp.AddReceivingCustomMethod) and the handle through its middleware.

// tasksExtension is the extension's identifier.
const tasksExtension = "io.modelcontextprotocol/tasks"

// taskPollInterval is the polling interval tasks suggest.
const taskPollInterval = time.Second

// Task statuses (SEP-2663).
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskCancelled     = "cancelled"
)

// taskResult is a Task: the handle a tools/call answers (resultType
// "task") and what tasks/get answers (resultType "complete", with the
// result or the input requests inlined).
type taskResult struct {
	mcp.ResultBase
	ResultType     string              `json:"resultType"`
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTLMs          *int64              `json:"ttlMs"`
	PollIntervalMs int64               `json:"pollIntervalMs"`
	InputRequests  mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Result         *mcp.CallToolResult `json:"result,omitempty"`
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
}

// ackResult is the empty acknowledgement of tasks/update and tasks/cancel.
type ackResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// taskSlot is where a tools/call's handler leaves the run it turned into
// a task, for taskMiddleware to answer the handle instead of its result.
type taskSlot struct{ runID string }

type taskSlotKey struct{}

func taskSlotFrom(ctx context.Context) *taskSlot {
	slot, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	return slot
}

// errBecomesTask is submit's word that the run outlasted TaskAfter.
var errBecomesTask = errors.New("the run becomes a task")

// takesTasks reports whether a tools/call's client declared the extension.
func takesTasks(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || req.ProtocolVersion() < sessionlessVersion {
		return false
	}
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// taskMiddleware answers a tools/call whose handler made its run a task
// with the task handle.
func (s *Server) taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || !takesTasks(call) {
			return next(ctx, method, req)
		}
		slot := &taskSlot{}
		res, err := next(context.WithValue(ctx, taskSlotKey{}, slot), method, req)
		if err != nil || slot.runID == "" {
			return res, err
		}
		task, err := s.rt.GetTask(ctx, slot.runID)
		if err != nil {
			return nil, err
		}
		t := s.taskView(task)
		t.ResultType = "task"
		return t, nil
	}
}

// taskView is the Task of run task, without what tasks/get inlines.
func (s *Server) taskView(task run.Task) *taskResult {
	t := &taskResult{
		ResultType: "complete", TaskID: task.ID, Status: taskWorking,
		CreatedAt: task.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: task.UpdatedAt.UTC().Format(time.RFC3339Nano),
		PollIntervalMs: taskPollInterval.Milliseconds(),
		ResultBase:     mcp.ResultBase{Meta: mcp.Meta{metaRunID: task.ID, metaContextID: task.ContextID, metaStatus: string(task.State)}},
	}
	switch {
	case task.State == run.StateInputRequired || task.State == run.StateAuthRequired:
		t.Status, t.StatusMessage = taskInputRequired, promptText(task)
	case task.State == run.StateCanceled:
		t.Status = taskCancelled
	case task.State.Terminal():
		t.Status = taskCompleted // a failed run is a tool error result, not a JSON-RPC error
	}
	return t
}

// addTaskMethods serves tasks/get, tasks/update and tasks/cancel on srv,
// for the runs of agentID ("" for every agent).
func (s *Server) addTaskMethods(srv *mcp.Server, agentID string) {
	must := func(err error) {
		if err != nil {
			panic(err) // only a standard method's name is refused
		}
	}
	must(mcp.AddReceivingCustomMethod(srv, "tasks/get", func(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*taskResult, error) {
		return s.getTask(ctx, agentID, p)
	}))
	must(mcp.AddReceivingCustomMethod(srv, "tasks/update", func(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*ackResult, error) {
		return s.updateTask(ctx, agentID, p)
	}))
	must(mcp.AddReceivingCustomMethod(srv, "tasks/cancel", func(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*ackResult, error) {
		if _, err := s.lookupTask(ctx, agentID, p); err != nil {
			return nil, err
		}
		if _, err := s.rt.Cancel(ctx, p.TaskID); err != nil && !errors.Is(err, runtime.ErrNotCancelable) {
			return nil, s.taskError(err)
		}
		return &ackResult{ResultType: "complete"}, nil
	}))
}

// lookupTask is the run a task method names, in the caller's tenant and
// of the endpoint's agent.
func (s *Server) lookupTask(ctx context.Context, agentID string, p *taskParams) (run.Task, error) {
	if p == nil || p.TaskID == "" {
		return run.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params.taskId: required"}
	}
	task, err := s.rt.GetTask(ctx, p.TaskID)
	if err == nil && agentID != "" && task.AgentID != agentID {
		err = errdefs.NotFoundf("task %q not found", p.TaskID)
	}
	if err != nil {
		return run.Task{}, s.taskError(err)
	}
	return task, nil
}

// getTask answers tasks/get: the task, its result once the run ended, its
// prompt while it waits.
func (s *Server) getTask(ctx context.Context, agentID string, p *taskParams) (*taskResult, error) {
	task, err := s.lookupTask(ctx, agentID, p)
	if err != nil {
		return nil, err
	}
	t := s.taskView(task)
	switch {
	case t.Status == taskInputRequired:
		t.InputRequests = mcp.InputRequestMap{inputKey(task): elicitParams(task)}
	case task.State.Terminal():
		task, msgs, err := s.rt.WaitView(ctx, task.ID) // at once: the run has ended
		if err != nil {
			return nil, s.taskError(err)
		}
		c := &call{s: s, t: s.tools[task.AgentID]}
		t.Result = c.result(task, msgs)
	}
	return t, nil
}

// updateTask answers tasks/update: the response to the task's current
// prompt goes into the run (declining a prompt that is not an approval
// cancels it); responses to any other key are ignored, as SEP-2663 asks.
func (s *Server) updateTask(ctx context.Context, agentID string, p *taskParams) (*ackResult, error) {
	task, err := s.lookupTask(ctx, agentID, p)
	if err != nil {
		return nil, err
	}
	res, ok := p.InputResponses[inputKey(task)].(*mcp.ElicitResult)
	if !ok || task.State != run.StateInputRequired {
		return &ackResult{ResultType: "complete"}, nil
	}
	answer, err := answerOf(task, res)
	switch {
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params.inputResponses." + inputKey(task) + ": " + err.Error()}
	case answer == nil:
		_, err = s.rt.Cancel(ctx, task.ID)
	default:
		_, err = s.rt.Send(ctx, runtime.SendRequest{AgentID: task.AgentID, TaskID: task.ID, Message: *answer})
	}
	if err != nil {
		return nil, s.taskError(err)
	}
	return &ackResult{ResultType: "complete"}, nil
}

// taskError is the JSON-RPC error of a task method the runtime refused;
// an internal or unavailable cause stays in the log.
func (s *Server) taskError(err error) error {
	switch {
	case errdefs.IsNotFound(err), errdefs.IsValidation(err), errdefs.IsConflict(err):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case !errdefs.IsPublic(err):
		s.opts.Logger.Warn("mcp: task method", "err", err)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errdefs.ClientText(err)}
}
