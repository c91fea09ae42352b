package llm

import (
	"context"
	"encoding/json"
	"errors"

	"agentd/internal/model"
)

// ErrClosed is returned by Stream.Next after Close.
var ErrClosed = errors.New("llm: stream closed")

// Provider streams chat turns from a model.
type Provider interface {
	// Stream starts one turn. Errors before the first chunk (bad request,
	// authentication, exhausted retries) are returned here; later ones come
	// from Stream.Next. The stream lives until ctx ends or Close is called.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream yields the chunks of one turn. It is not safe for concurrent use.
type Stream interface {
	// Next returns the next chunk, io.EOF after the last one, or the error
	// that ended the stream (ctx.Err() when the turn's context ended).
	Next() (Chunk, error)
	// Close releases the stream; it is idempotent.
	Close() error
}

// Request is one chat turn to run.
type Request struct {
	// Model names the model; empty means the provider's configured default.
	Model string
	// Messages is the conversation so far, oldest first. Assistant messages
	// may carry tool-call parts, tool messages carry tool-result parts.
	// The caller may share them with its own state (the loop engine passes
	// its board's messages as they are): providers read them and never
	// modify them.
	Messages []model.Message
	// Tools the model may call.
	Tools []ToolSpec
	// Temperature is nil for the provider's default.
	Temperature *float64
	// MaxTokens caps the answer; 0 means the provider's default.
	MaxTokens int
	// TopP is nil for the provider's default (nucleus sampling).
	TopP *float64
	// ResponseFormat, when set, asks for a JSON answer its schema accepts
	// (format.go).
	ResponseFormat *ResponseFormat
	// ToolChoice says whether the model may, must or must not call a tool
	// this turn; the zero value is the provider's default.
	ToolChoice ToolChoice
	// Metadata is opaque caller context (agent id, run id). Providers may use
	// it for tracing or templating; none sends it to a model.
	Metadata map[string]string
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object; nil means a
	// tool without arguments.
	Parameters json.RawMessage
}

// Chunk is one increment of a streamed turn. Any combination of fields may
// be set; a zero Chunk is never emitted.
type Chunk struct {
	// Text is a fragment of the answer.
	Text string
	// Reasoning is a fragment of the model's visible thinking, kept apart
	// from the answer.
	Reasoning string
	// ToolCalls are fragments of tool calls, joined by Index.
	ToolCalls []ToolCallDelta
	// Usage, when set, is the cumulative usage of the turn so far; the last
	// one reported wins.
	Usage *model.TokenUsage
	// FinishReason is set once, near the end (see the Finish constants).
	FinishReason string
}

// ToolCallDelta is a fragment of one tool call. The first fragment of a
// call usually carries ID and Name; Arguments fragments concatenate into the
// call's JSON arguments.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Finish reasons, as OpenAI names them; providers map theirs onto these.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
)
