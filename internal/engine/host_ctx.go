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
