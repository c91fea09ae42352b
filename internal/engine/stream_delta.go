package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/event"
	"agentd/internal/runlog/jsonfast"
)

// StreamDeltaType discriminates StreamDeltaPayload. Consumers skip types
// they do not know: new types are forward-compatible additions.
type StreamDeltaType string

// The stream-delta types engines emit.
const (
	// StreamDeltaToken is a piece of generated assistant text. Requires
	// Content.
	StreamDeltaToken StreamDeltaType = "token"
	// StreamDeltaToolCall is a tool call the model requested. Requires ID
	// and Name; Arguments recommended.
	StreamDeltaToolCall StreamDeltaType = "tool_call"
	// StreamDeltaToolResult is the outcome of a tool call, or a
	// synthesised cancellation (Cancelled) when the round was interrupted
	// before dispatch. Requires ToolCallID; Name, Content, IsError
	// recommended.
	StreamDeltaToolResult StreamDeltaType = "tool_result"
)

// StreamDeltaPayload is the JSON payload of a SubjectStreamDelta envelope.
// Engines may add fields; consumers rely only on these.
//
//	type         required            recommended
//	token        content             —
//	tool_call    id, name            arguments
//	tool_result  tool_call_id        name, content, is_error, cancelled
type StreamDeltaPayload struct {
	Type StreamDeltaType `json:"type"`
	// Content is the text of a token, or the output of a tool result.
	Content string `json:"content,omitempty"`
	// ID is the model-assigned tool-call id (tool_call only).
	ID string `json:"id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name,omitempty"`
	// Arguments is the tool input: a JSON string or decoded JSON (map,
	// slice); consumers accept both.
	Arguments any `json:"arguments,omitempty"`
	// ToolCallID pairs a tool_result with its tool_call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Cancelled marks a synthesised result for a call never dispatched.
	Cancelled bool `json:"cancelled,omitempty"`
}

// Validate checks the per-type required fields; it is the one rule both
// EmitStreamDelta (publisher side) and DecodeStreamDelta (consumer side)
// apply. Unknown non-empty types pass, for forward compatibility.
//
// An empty token is rejected: it carries nothing, and every delta may
// become a stored event. A tool result may have empty content, since a
// tool may legitimately return nothing.
func (p StreamDeltaPayload) Validate() error {
	var missing string
	switch p.Type {
	case "":
		missing = "type"
	case StreamDeltaToken:
		if p.Content == "" {
			missing = "content"
		}
	case StreamDeltaToolCall:
		if p.ID == "" {
			missing = "id"
		} else if p.Name == "" {
			missing = "name"
		}
	case StreamDeltaToolResult:
		if p.ToolCallID == "" {
			missing = "tool_call_id"
		}
	}
	if missing != "" {
		return errdefs.Validationf("stream delta %q: missing %s", p.Type, missing)
	}
	return nil
}

// DecodeStreamDelta decodes and validates the payload of a stream-delta
// envelope. It does not check the subject; filter with IsStreamDelta.
func DecodeStreamDelta(env event.Envelope) (StreamDeltaPayload, error) {
	var p StreamDeltaPayload
	if len(env.Payload) == 0 {
		return p, errdefs.Validationf("stream delta on %q: empty payload", env.Subject)
	}
	if err := json.Unmarshal(env.Payload, &p); err != nil {
		return p, errdefs.Validationf("stream delta on %q: %w", env.Subject, err)
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("on %q: %w", env.Subject, err)
	}
	return p, nil
}

// EmitStreamDelta validates payload and publishes it on
// SubjectStreamDelta(runID, stepActor). stepActor starts with the agent id
// and may carry a ".node.<id>" or ".iter<N>" suffix; the envelope's RunID,
// AgentID and NodeID are stamped from the raw ids (see newEnvelope).
// Publish errors are returned; since deltas are observability, most
// callers ignore them.
func EmitStreamDelta(ctx context.Context, pub Publisher, runID, stepActor string, payload StreamDeltaPayload) error {
	if err := payload.Validate(); err != nil {
		return fmt.Errorf("emit on run %q step %q: %w", runID, stepActor, err)
	}
	env, err := newEnvelope(SubjectStreamDelta(runID, stepActor), runID, stepActor, payload)
	if err != nil {
		return err
	}
	return pub.Publish(ctx, env)
}

// EmitStreamToken publishes one piece of assistant text.
func EmitStreamToken(ctx context.Context, pub Publisher, runID, stepActor, content string) error {
	return EmitStreamDelta(ctx, pub, runID, stepActor, StreamDeltaPayload{Type: StreamDeltaToken, Content: content})
}

// EmitStreamToolCall publishes a tool call the model requested. args is
// the tool input as a JSON string, json.RawMessage or decoded value.
func EmitStreamToolCall(ctx context.Context, pub Publisher, runID, stepActor, id, name string, args any) error {
	return EmitStreamDelta(ctx, pub, runID, stepActor, StreamDeltaPayload{
		Type: StreamDeltaToolCall, ID: id, Name: name, Arguments: args,
	})
}

// EmitStreamToolResult publishes the outcome of a tool call; cancelled
// marks a synthesised result for a call that never ran.
func EmitStreamToolResult(ctx context.Context, pub Publisher, runID, stepActor, toolCallID, name, content string, isError, cancelled bool) error {
	return EmitStreamDelta(ctx, pub, runID, stepActor, StreamDeltaPayload{
		Type: StreamDeltaToolResult, ToolCallID: toolCallID, Name: name,
		Content: content, IsError: isError, Cancelled: cancelled,
	})
}

// TokenStream publishes the text deltas of one step actor of a run,
// building the subject and routing fields once (see ActorEvents, which it
// wraps): engines stream thousands of tokens per run.
type TokenStream struct {
	events ActorEvents
}

// NewTokenStream returns the token publisher of stepActor in run runID,
// publishing through pub (see EmitStreamDelta for the subject and the
// routing fields).
func NewTokenStream(pub Publisher, runID, stepActor string) *TokenStream {
	return &TokenStream{events: NewActorEvents(pub, runID, stepActor)}
}

// Emit publishes one piece of assistant text; the envelope is the one
// EmitStreamToken would publish.
func (s *TokenStream) Emit(ctx context.Context, content string) error {
	return s.events.Token(ctx, content)
}

// tokenPrefix opens a token payload: the members of StreamDeltaPayload
// before Content, in order, as encoding/json writes them when only Type
// and Content are set.
const tokenPrefix = `{"type":"token","content":`

// encodeToken is json.Marshal(StreamDeltaPayload{Type: token, Content:
// content}), written by jsonfast: the token is the bulk of all events, and
// json.Marshal costs it three times as much.
func encodeToken(content string) json.RawMessage {
	return jsonfast.AppendObject(make([]byte, 0, len(tokenPrefix)+len(content)+3), tokenPrefix, content)
}

// RawStreamToken returns the content of a token payload shaped exactly as
// EmitStreamToken encodes it — {"type":"token","content":"…"} and nothing
// else — as a JSON string, still encoded and validated, so that a consumer
// can splice it into its own JSON without decoding it. ok is false for any
// other payload (another type, more members, other spacing, an empty or
// invalid string): decode those with DecodeStreamDelta.
func RawStreamToken(payload []byte) (content json.RawMessage, ok bool) {
	return jsonfast.StringAfter(payload, tokenPrefix)
}

// newEnvelope encodes payload on subject and stamps the routing fields:
// RunID is runID as given (unsanitised, unlike the subject); AgentID and
// NodeID come from stepActor via ParseStepActor.
func newEnvelope(subject event.Subject, runID, stepActor string, payload any) (event.Envelope, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return event.Envelope{}, errdefs.Validationf("encode %s payload: %w", subject, err)
	}
	env := event.Envelope{Subject: subject, Time: time.Now().UTC(), RunID: runID, Payload: b}
	if stepActor != "" {
		env.AgentID, env.NodeID = ParseStepActor(stepActor)
	}
	return env, nil
}
