package tool

import (
	"context"
	"encoding/json"

	"agentd/internal/errdefs"
)

// Spec describes a tool the way a model request lists it (name, description,
// parameters schema), plus its flags.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Flags       Flags           `json:"flags,omitzero"`
}

// Func is the body of a tool built with New.
type Func func(ctx context.Context, args json.RawMessage) (Result, error)

// New returns a Tool described by spec whose Execute calls fn.
func New(spec Spec, fn Func) Tool { return &funcTool{spec: spec, fn: fn} }

// Typed returns a Tool whose Execute decodes the arguments into an A before
// calling fn, so the body works with a Go struct. The schema in spec stays
// the source of truth for validation; A only has to accept what it allows.
func Typed[A any](spec Spec, fn func(ctx context.Context, args A) (Result, error)) Tool {
	return New(spec, func(ctx context.Context, raw json.RawMessage) (Result, error) {
		var args A
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &args); err != nil {
				return Result{}, errdefs.Validationf("decode arguments: %w", err)
			}
		}
		return fn(ctx, args)
	})
}

type funcTool struct {
	spec Spec
	fn   Func
}

func (t *funcTool) Name() string            { return t.spec.Name }
func (t *funcTool) Description() string     { return t.spec.Description }
func (t *funcTool) Schema() json.RawMessage { return t.spec.Parameters }
func (t *funcTool) Flags() Flags            { return t.spec.Flags }

func (t *funcTool) Execute(ctx context.Context, args json.RawMessage) (Result, error) {
	return t.fn(ctx, args)
}
