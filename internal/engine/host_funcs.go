package engine

import (
	"context"

	"agentd/internal/model"
)

// HostFuncs builds a Host from optional functions: a set field handles its
// method, a nil field delegates to Inner, and with Inner nil as well the
// method behaves like NoopHost. Middlewares use it to decorate only the
// methods they care about:
//
//	engine.HostFuncs{
//		Inner: base,
//		ReportUsageFn: func(ctx context.Context, name string, u model.TokenUsage) error {
//			// budget enforcement, then:
//			return base.ReportUsage(ctx, name, u)
//		},
//	}
type HostFuncs struct {
	Inner         Host
	PublishFn     func(ctx context.Context, ev Event) error
	InterruptsFn  func() <-chan Interrupt
	AskUserFn     func(ctx context.Context, prompt UserPrompt) (UserReply, error)
	CheckpointFn  func(ctx context.Context, cp Checkpoint) error
	ReportUsageFn func(ctx context.Context, modelName string, usage model.TokenUsage) error
}

func (h HostFuncs) inner() Host {
	if h.Inner == nil {
		return NoopHost{}
	}
	return h.Inner
}

// Publish routes to PublishFn, else Inner, else discards.
func (h HostFuncs) Publish(ctx context.Context, ev Event) error {
	if h.PublishFn != nil {
		return h.PublishFn(ctx, ev)
	}
	return h.inner().Publish(ctx, ev)
}

// Interrupts routes to InterruptsFn, else Inner, else never fires.
func (h HostFuncs) Interrupts() <-chan Interrupt {
	if h.InterruptsFn != nil {
		return h.InterruptsFn()
	}
	return h.inner().Interrupts()
}

// AskUser routes to AskUserFn, else Inner, else answers NotAvailable.
func (h HostFuncs) AskUser(ctx context.Context, prompt UserPrompt) (UserReply, error) {
	if h.AskUserFn != nil {
		return h.AskUserFn(ctx, prompt)
	}
	return h.inner().AskUser(ctx, prompt)
}

// Checkpoint routes to CheckpointFn, else Inner, else discards.
func (h HostFuncs) Checkpoint(ctx context.Context, cp Checkpoint) error {
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

// HostMiddleware decorates a Host with policy or observability (audit,
// budget, tracing). It must delegate unchanged every method it does not
// decorate — HostFuncs makes that the default — and, like any Host, be
// safe for concurrent use.
type HostMiddleware func(Host) Host

// ComposeHost wraps base in mws so that the first middleware is the
// outermost: ComposeHost(base, A, B) is A(B(base)), and an engine's call
// reaches A first, as with HTTP middleware stacks. Nil middlewares are
// skipped; with none, base is returned as is.
func ComposeHost(base Host, mws ...HostMiddleware) Host {
	h := base
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}
