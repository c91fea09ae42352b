package run

import "context"

// Current identifies the run an attempt executes. The runtime puts it in
// the context of every attempt, so that code below the engines — a tool —
// can name the run's conversation and caller without reading the store,
// where a run's create may not be written yet (it rides with the run's
// first write).
type Current struct {
	TaskID    string
	ContextID string
	AgentID   string
	// Metadata is the run's metadata as it started; read it, never write
	// it.
	Metadata map[string]any
}

type currentKey struct{}

// WithCurrent returns ctx carrying c.
func WithCurrent(ctx context.Context, c Current) context.Context {
	return context.WithValue(ctx, currentKey{}, c)
}

// CurrentFrom returns the run WithCurrent put in ctx; ok is false outside
// a run.
func CurrentFrom(ctx context.Context) (Current, bool) {
	c, ok := ctx.Value(currentKey{}).(Current)
	return c, ok
}
