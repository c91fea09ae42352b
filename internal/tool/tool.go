package tool

import (
	"context"
	"encoding/json"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Tool is something a model can call: a name, a description, a JSON Schema
// for its arguments object, flags that tell the engines how it may be run,
// and Execute.
//
// Execute receives arguments that already passed the schema when it is
// called through a Registry. Returning an error is the ordinary way to fail:
// the registry turns it into an error Result the model can read ("name:
// message"); return a Result with IsError set to choose the exact words.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON Schema of the arguments object; empty means the tool
	// takes no arguments.
	Schema() json.RawMessage
	Flags() Flags
	Execute(ctx context.Context, args json.RawMessage) (Result, error)
}

// Approval says whether a human must approve a call before it runs.
type Approval string

// The approval policies a tool can declare. The empty value means none.
const (
	ApprovalNone     Approval = "none"
	ApprovalRequired Approval = "required"
)

// Flags tell the engines how a tool may be run.
type Flags struct {
	// ParallelSafe tools may run concurrently with other parallel-safe calls
	// of the same turn; others run alone, in call order.
	ParallelSafe bool `json:"parallel_safe,omitempty"`
	// Idempotent tools may be retried or replayed after a crash without
	// repeating a side effect.
	Idempotent bool `json:"idempotent,omitempty"`
	// Approval "required" pauses the run until a human approves the call.
	Approval Approval `json:"approval,omitempty"`
	// Effects is what a call does outside the run (effects.go); empty
	// reads as none.
	Effects Effects `json:"effects,omitempty"`
}

// RequiresApproval reports whether calls must be approved before they run.
func (f Flags) RequiresApproval() bool { return f.Approval == ApprovalRequired }

func (f Flags) validate() error {
	if err := f.Effects.Validate(); err != nil {
		return err
	}
	switch f.Approval {
	case "", ApprovalNone, ApprovalRequired:
		return nil
	}
	return errdefs.Validationf("approval %q: want %q or %q", f.Approval, ApprovalNone, ApprovalRequired)
}

// Result is the outcome of a call.
type Result struct {
	// Content is what the model sees.
	Content string `json:"content"`
	// Data optionally carries the structured result (JSON) for engines that
	// save or route it; the model sees only Content.
	Data    json.RawMessage `json:"data,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Err is the classified cause when the registry produced an error result
	// (unknown tool, bad arguments, a returned error, a panic, a cancelled
	// context). It is for the host — tracing, retries, errdefs.ClassOf — and
	// never shown to the model. It is nil when a tool set IsError itself.
	Err error `json:"-"`
}

// Text returns a successful result with content s.
func Text(s string) Result { return Result{Content: s} }

// ToolResult pairs r with the call it answers, in the shape messages carry.
func (r Result) ToolResult(c Call) model.ToolResult {
	return model.ToolResult{ToolCallID: c.ID, Name: c.Name, Content: r.Content, IsError: r.IsError}
}

// Call is one request to run a tool: model.ToolCall plus the idempotency key
// an engine derives for it (deterministic across replays).
type Call struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// CallOf returns the call a model's tool-call part asks for.
func CallOf(tc model.ToolCall) Call {
	return Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
}

// ToolCall returns c as a message part's tool call (without the key).
func (c Call) ToolCall() model.ToolCall {
	return model.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
}

type callKey struct{}

// ContextWithCall returns ctx carrying c; the Registry does this for every
// call so tools can read their call ID and idempotency key.
func ContextWithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFromContext returns the call ctx carries, if any.
func CallFromContext(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}
