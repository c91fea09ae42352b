package a2a

import (
	"context"
	"iter"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"agentd/internal/auth"
)

// guard checks the caller's scope for each A2A method before the handler
// sees it. The HTTP edge (auth.Middleware) has already authenticated the
// caller and put its tenant in the context; only the method, known once
// the transport has decoded the body, tells which scope it needs. Without
// authentication configured every call passes.
type guard struct {
	next   a2asrv.RequestHandler
	extend func(ctx context.Context) (*a2a.AgentCard, error)
}

var _ a2asrv.RequestHandler = guard{}

// denied is the A2A error for a caller without scope s (JSON-RPC -31403,
// HTTP+JSON 403).
func denied(ctx context.Context, method string, s auth.Scope) error {
	if auth.Allowed(ctx, s) {
		return nil
	}
	return a2a.NewError(a2a.ErrUnauthorized, method+" needs the scope "+string(s)+", which this key or token does not grant")
}

func deniedSeq(err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, err) }
}

func (g guard) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if err := denied(ctx, "GetTask", auth.RunsRead); err != nil {
		return nil, err
	}
	return g.next.GetTask(ctx, req)
}

func (g guard) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	if err := denied(ctx, "ListTasks", auth.RunsRead); err != nil {
		return nil, err
	}
	return g.next.ListTasks(ctx, req)
}

func (g guard) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if err := denied(ctx, "CancelTask", auth.RunsWrite); err != nil {
		return nil, err
	}
	return g.next.CancelTask(ctx, req)
}

func (g guard) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if err := denied(ctx, "SendMessage", auth.RunsWrite); err != nil {
		return nil, err
	}
	return g.next.SendMessage(ctx, req)
}

func (g guard) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	if err := denied(ctx, "SubscribeToTask", auth.RunsRead); err != nil {
		return deniedSeq(err)
	}
	return g.next.SubscribeToTask(ctx, req)
}

func (g guard) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	if err := denied(ctx, "SendStreamingMessage", auth.RunsWrite); err != nil {
		return deniedSeq(err)
	}
	return g.next.SendStreamingMessage(ctx, req)
}

func (g guard) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	if err := denied(ctx, "GetTaskPushNotificationConfig", auth.RunsRead); err != nil {
		return nil, err
	}
	return g.next.GetTaskPushConfig(ctx, req)
}

func (g guard) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	if err := denied(ctx, "ListTaskPushNotificationConfigs", auth.RunsRead); err != nil {
		return nil, err
	}
	return g.next.ListTaskPushConfigs(ctx, req)
}

func (g guard) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	if err := denied(ctx, "CreateTaskPushNotificationConfig", auth.RunsWrite); err != nil {
		return nil, err
	}
	return g.next.CreateTaskPushConfig(ctx, req)
}

func (g guard) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	if err := denied(ctx, "DeleteTaskPushNotificationConfig", auth.RunsWrite); err != nil {
		return err
	}
	return g.next.DeleteTaskPushConfig(ctx, req)
}

// GetExtendedAgentCard serves the extended card to authenticated callers
// when the server authenticates; otherwise the handler answers (no
// extended card is declared then).
func (g guard) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if _, ok := auth.PrincipalFrom(ctx); !ok || g.extend == nil {
		return g.next.GetExtendedAgentCard(ctx, req)
	}
	if err := denied(ctx, "GetExtendedAgentCard", auth.AgentsRead); err != nil {
		return nil, err
	}
	return g.extend(ctx)
}
