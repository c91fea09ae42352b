package a2a

import (
	"context"
	"errors"
	"math"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// DefaultHistoryLength is how many transcript messages a Task carries when
// the request does not say (GetTask, SendMessage, CancelTask, streams).
// ListTasks defaults to none.
const DefaultHistoryLength = 100

// Page sizes of ListTasks.
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// handler is one agent's a2asrv.RequestHandler: every method works on that
// agent's tasks only, through the runtime and the store.
type handler struct {
	s     *Server
	agent *runtime.Agent
}

var _ a2asrv.RequestHandler = (*handler)(nil)

// reads is where the handler reads tasks, transcripts and logs: the
// runtime, never the store.
func (h *handler) reads() *runtime.Runtime { return h.s.rt }

// taskOf loads a task of this agent; a task of another agent does not
// exist as far as this endpoint is concerned.
func (h *handler) taskOf(ctx context.Context, id a2a.TaskID) (run.Task, error) {
	if id == "" {
		return run.Task{}, invalidParams("id: required")
	}
	t, err := h.reads().GetTask(ctx, string(id))
	if errdefs.IsNotFound(err) || (err == nil && t.AgentID != h.agent.ID) {
		return run.Task{}, errTaskNotFound(id)
	}
	if err != nil {
		return run.Task{}, toA2AError(ctx, err)
	}
	return t, nil
}

// GetTask answers the task with the last historyLength messages.
func (h *handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	n, err := historyLength(req.HistoryLength, DefaultHistoryLength)
	if err != nil {
		return nil, err
	}
	t, err := h.taskOf(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	return h.snapshot(ctx, t, n, allArtifacts)
}

// ListTasks lists this agent's tasks, newest first, with cursor paging.
func (h *handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	q := run.TaskQuery{AgentID: h.agent.ID, ContextID: req.ContextID, Cursor: req.PageToken}
	if req.Status != a2a.TaskStateUnspecified {
		st, ok := fromState(req.Status)
		if !ok {
			return nil, invalidParams("status: unknown task state %q (want TASK_STATE_SUBMITTED, TASK_STATE_WORKING, …)", req.Status)
		}
		q.States = []run.TaskState{st}
	}
	switch size := req.PageSize; {
	case size < 0:
		return nil, invalidParams("pageSize: must not be negative, got %d", size)
	case size == 0:
		q.Limit = defaultPageSize
	default:
		q.Limit = min(size, maxPageSize)
	}
	if req.StatusTimestampAfter != nil {
		q.UpdatedAfter = *req.StatusTimestampAfter
	}
	n, err := historyLength(req.HistoryLength, 0)
	if err != nil {
		return nil, err
	}
	page, err := h.reads().ListTasks(ctx, q)
	if err != nil {
		return nil, toA2AError(ctx, err)
	}
	out := &a2a.ListTasksResponse{
		Tasks: make([]*a2a.Task, 0, len(page.Tasks)), NextPageToken: page.NextCursor,
		PageSize: q.Limit, TotalSize: page.Total,
	}
	for _, t := range page.Tasks {
		task, err := h.snapshot(ctx, t, n, artifactsIf(req.IncludeArtifacts))
		if err != nil {
			return nil, err
		}
		out.Tasks = append(out.Tasks, task)
	}
	return out, nil
}

// CancelTask cancels the task and, when it was running, waits (bounded by
// Options.CancelWait) until the cancel took effect. Canceling a canceled
// task answers it unchanged; a task that ended otherwise is -32002.
func (h *handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	t, err := h.taskOf(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	if t, err = h.s.rt.Cancel(ctx, t.ID); err != nil {
		return nil, toA2AError(ctx, err)
	}
	h.s.pokePush() // a parked webhook gets the cancel now
	if !t.State.Terminal() {
		wctx, cancel := context.WithTimeout(ctx, h.s.opts.CancelWait)
		w, err := h.s.rt.Wait(wctx, t.ID)
		cancel()
		if err == nil {
			t = w
		}
	}
	if t.State.Terminal() && t.State != run.StateCanceled {
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, "task "+t.ID+" ended "+string(t.State)+" before the cancel took effect")
	}
	return h.snapshot(ctx, t, DefaultHistoryLength, allArtifacts)
}

// SendMessage starts a task or continues one that waits for input. By
// default it waits until the task is terminal or interrupted;
// configuration.returnImmediately answers at once. An answer the agent
// marked as a direct message (model.MetaResponseKind) is returned as
// a Message instead of the Task.
func (h *handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	var cfg a2a.SendMessageConfig
	if req.Config != nil {
		cfg = *req.Config
	}
	n, err := historyLength(cfg.HistoryLength, DefaultHistoryLength)
	if err != nil {
		return nil, err
	}
	await := runtime.AwaitEnd
	if cfg.ReturnImmediately {
		await = runtime.AwaitNone
	}
	sub, err := h.submit(ctx, req, await)
	if err != nil {
		return nil, err
	}
	t := sub.Task
	if cfg.ReturnImmediately {
		return h.snapshot(ctx, t, n, allArtifacts)
	}
	if t, err = h.s.rt.Wait(ctx, t.ID); err != nil {
		return nil, toA2AError(ctx, err)
	}
	if t.State != run.StateCompleted {
		return h.snapshot(ctx, t, n, allArtifacts)
	}
	// One read of the transcript serves both the direct answer (its last
	// message) and the Task's history.
	msgs, err := h.lastMessages(ctx, t, max(n, 1))
	if err != nil {
		return nil, err
	}
	if m := directAnswer(t, msgs); m != nil {
		return m, nil
	}
	return h.snapshotOf(ctx, t, msgs[len(msgs)-min(n, len(msgs)):], allArtifacts)
}

// submit validates a send request and hands it to the runtime. Every check
// that can refuse the request runs before anything is created. await is
// how the caller takes the answer (runtime.SendRequest); a webhook's
// config is stored for the task right away, so such a send is never
// deferred. A stream's caller waits for its task to be stored (Durable).
func (h *handler) submit(ctx context.Context, req *a2a.SendMessageRequest, await runtime.Await) (runtime.Submission, error) {
	var push *webhook
	if req.Config != nil && req.Config.PushConfig != nil {
		// Refused before anything is created, like every other check.
		hook, err := h.checkWebhook(ctx, req.Config.PushConfig, "configuration.taskPushNotificationConfig.")
		if err != nil {
			return runtime.Submission{}, err
		}
		push = &hook
	}
	msg, err := fromMessage(req.Message)
	if err != nil {
		return runtime.Submission{}, err
	}
	sr := runtime.SendRequest{
		AgentID: h.agent.ID, AssistantID: assistantOf(req.Metadata), ContextID: req.Message.ContextID, TaskID: string(req.Message.TaskID),
		Message: msg, Metadata: req.Metadata, Await: await,
	}
	if push != nil {
		sr.Await = runtime.AwaitNone
	}
	if sr.TaskID != "" {
		t, err := h.taskOf(ctx, req.Message.TaskID)
		if err != nil {
			return runtime.Submission{}, err
		}
		if sr.ContextID != "" && sr.ContextID != t.ContextID {
			return runtime.Submission{}, invalidParams("message.contextId: task %s belongs to context %s, not %s", t.ID, t.ContextID, sr.ContextID)
		}
		if t.State.Terminal() {
			return runtime.Submission{}, a2a.NewError(a2a.ErrUnsupportedOperation,
				"task "+t.ID+" is "+string(t.State)+" and accepts no more messages; send without taskId (in context "+t.ContextID+") to start a new task")
		}
		if push != nil {
			if err := h.roomForConfig(ctx, t.ID, req.Config.PushConfig.ID); err != nil {
				return runtime.Submission{}, err
			}
		}
	}
	sub, err := h.s.rt.Send(ctx, sr)
	if err != nil && errdefs.FieldOf(err) == "assistant_id" {
		// Not a task that is missing: the request's parameter is wrong.
		return runtime.Submission{}, invalidParams("metadata.%s: %s", MetaAssistantID, errors.Unwrap(err))
	}
	if err != nil {
		return runtime.Submission{}, toA2AError(ctx, err)
	}
	if sr.TaskID != "" {
		// The task resumed: its parked webhooks are claimable again, and
		// this replica takes them up now rather than at its next sweep.
		h.s.pokePush()
	}
	if push != nil && !sub.Duplicate {
		// The webhook gets every update of this submission's attempt.
		if _, err := h.putPushConfig(ctx, sub.Task, req.Config.PushConfig.ID, *push, sub.StartSeq); err != nil {
			return runtime.Submission{}, err
		}
	}
	return sub, nil
}

// directAnswer returns the task's final message — the last of msgs, the
// end of its transcript — when the agent asked for it to be answered as a
// Message, else nil.
func directAnswer(t run.Task, msgs []run.Message) *a2a.Message {
	if len(msgs) == 0 {
		return nil
	}
	last := msgs[len(msgs)-1]
	if kind, _ := last.Metadata[model.MetaResponseKind].(string); kind != "message" {
		return nil
	}
	return toMessage(last.Message, a2a.TaskID(t.ID), t.ContextID)
}

// Which artifacts a snapshot carries.
type artifactsIn int

const (
	noArtifacts artifactsIn = iota
	// allArtifacts: every artifact of the run, assembled from its log.
	allArtifacts
	// recordedArtifacts: the artifacts the engine recorded on the task.
	recordedArtifacts
)

// snapshot builds the A2A Task: status, the last n transcript messages of
// the task as history, and the artifacts asked for.
func (h *handler) snapshot(ctx context.Context, t run.Task, n int, which artifactsIn) (*a2a.Task, error) {
	var history []run.Message
	if n > 0 {
		var err error
		if history, err = h.lastMessages(ctx, t, n); err != nil {
			return nil, err
		}
	}
	return h.snapshotOf(ctx, t, history, which)
}

// lastMessages reads the last n messages of t's transcript, oldest first.
func (h *handler) lastMessages(ctx context.Context, t run.Task, n int) ([]run.Message, error) {
	page, err := h.reads().ListMessages(ctx, run.MessageQuery{ContextID: t.ContextID, TaskID: t.ID, Last: n})
	if err != nil {
		return nil, toA2AError(ctx, err)
	}
	return page.Messages, nil
}

// snapshotOf is snapshot with the history already read.
func (h *handler) snapshotOf(ctx context.Context, t run.Task, history []run.Message, which artifactsIn) (*a2a.Task, error) {
	id := a2a.TaskID(t.ID)
	out := &a2a.Task{
		ID: id, ContextID: t.ContextID, Metadata: callTreeMeta(t),
		Status: a2a.TaskStatus{State: toState(t.State), Timestamp: stamp(t.UpdatedAt)},
	}
	if t.StatusMessage != nil {
		out.Status.Message = toMessage(*t.StatusMessage, id, t.ContextID)
	}
	switch which {
	case allArtifacts:
		all, err := h.artifacts(ctx, t, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		out.Artifacts = all
	case recordedArtifacts:
		for _, a := range t.Artifacts {
			out.Artifacts = append(out.Artifacts, toArtifact(a))
		}
	}
	if len(history) > 0 {
		out.History = make([]*a2a.Message, len(history))
		for i, m := range history {
			out.History[i] = toMessage(m.Message, id, t.ContextID)
		}
	}
	return out, nil
}

func artifactsIf(asked bool) artifactsIn {
	if asked {
		return allArtifacts
	}
	return noArtifacts
}

// historyLength resolves A2A's historyLength: unset = def, 0 = none, n =
// at most the last n messages.
func historyLength(p *int, def int) (int, error) {
	switch {
	case p == nil:
		return def, nil
	case *p < 0:
		return 0, invalidParams("historyLength: must not be negative, got %d", *p)
	}
	return *p, nil
}

// GetExtendedAgentCard: the cards declare no extended card, which A2A
// answers with -32004 (-32007 is for a declared but absent one).
func (h *handler) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, a2a.NewError(a2a.ErrUnsupportedOperation, "agent "+h.agent.ID+" declares no extended agent card")
}
