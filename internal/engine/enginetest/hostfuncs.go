package enginetest

import (
	"context"

	"agentd/internal/engine"
	"agentd/internal/model"
)

// HostFuncs builds a Host from optional functions: a set field handles its
// method, a nil field delegates to Inner, and with Inner nil as well the
// method behaves like engine.NoopHost. Tests use it to decorate only the
// methods they care about:
//
//	HostFuncs{
//		Inner: base,
//		ReportUsageFn: func(ctx context.Context, name string, u model.TokenUsage) error {
//			// budget enforcement, then:
//			return base.ReportUsage(ctx, name, u)
//		},
//	}
type HostFuncs struct {
	Inner         engine.Host
	PublishFn     func(ctx context.Context, ev engine.Event) error
	InterruptsFn  func() <-chan engine.Interrupt
	AskUserFn     func(ctx context.Context, prompt engine.UserPrompt) (engine.UserReply, error)
	CheckpointFn  func(ctx context.Context, cp engine.Checkpoint) error
	ReportUsageFn func(ctx context.Context, modelName string, usage model.TokenUsage) error
}

func (h HostFuncs) inner() engine.Host {
	if h.Inner == nil {
		return engine.NoopHost{}
	}
	return h.Inner
}

// Publish routes to PublishFn, else Inner, else discards.
func (h HostFuncs) Publish(ctx context.Context, ev engine.Event) error {
	if h.PublishFn != nil {
		return h.PublishFn(ctx, ev)
	}
	return h.inner().Publish(ctx, ev)
}

// Interrupts routes to InterruptsFn, else Inner, else never fires.
func (h HostFuncs) Interrupts() <-chan engine.Interrupt {
	if h.InterruptsFn != nil {
		return h.InterruptsFn()
	}
	return h.inner().Interrupts()
}

// AskUser routes to AskUserFn, else Inner, else answers NotAvailable.
func (h HostFuncs) AskUser(ctx context.Context, prompt engine.UserPrompt) (engine.UserReply, error) {
	if h.AskUserFn != nil {
		return h.AskUserFn(ctx, prompt)
	}
	return h.inner().AskUser(ctx, prompt)
}

// Checkpoint routes to CheckpointFn, else Inner, else discards.
func (h HostFuncs) Checkpoint(ctx context.Context, cp engine.Checkpoint) error {
	if h.CheckpointFn != nil {
		return h.CheckpointFn(ctx, cp)
	}
	return h.inner().Checkpoint(ctx, cp)
}

// ReportUsage routes to ReportUsageFn, else Inner, else discards.
func (h HostFuncs) ReportUsage(ctx context.Context, modelName string, usage model.TokenUsage) error {
	if h.ReportUsageFn != nil {
		return h.ReportUsageFn(ctx, modelName, usage)
	}
	return h.inner().ReportUsage(ctx, modelName, usage)
}
