package engine

import "context"

// hostKey is the context key of WithHost; an unexported type so no other
// package can collide with it.
type hostKey struct{}

// WithHost returns ctx carrying h, for extension points whose signatures
// carry no Host (a tool's Execute, a plugin callback). The Host argument of
// Execute stays the contract; this is only transport for code below it.
// A nil h returns ctx unchanged.
func WithHost(ctx context.Context, h Host) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, hostKey{}, h)
}

// HostFromContext returns the Host attached by WithHost. ok is false when
// no engine attached one; extensions that need the host treat that as
// errdefs.NotAvailable.
func HostFromContext(ctx context.Context) (Host, bool) {
	h, ok := ctx.Value(hostKey{}).(Host)
	return h, ok
}

// runIDKey is the context key of WithRunID.
type runIDKey struct{}

// WithRunID returns ctx carrying the id of the run a tool call belongs to.
// Engines set it, next to WithHost, on the context of the tools they run,
// so that a tool can publish its progress under the run (ToolProgress)
// and name the child runs it starts.
func WithRunID(ctx context.Context, runID string) context.Context {
	return context.WithValue(ctx, runIDKey{}, runID)
}

// RunIDFromContext returns the run id WithRunID attached.
func RunIDFromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(runIDKey{}).(string)
	return id, ok && id != ""
}
