package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"agentd/internal/errdefs"
	"agentd/internal/event"
	"agentd/internal/model"
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
	var (
		env event.Envelope
		err error
	)
	// A plain token (the bulk of all deltas) is encoded by hand. The
	// comparison cannot panic: the literal's Arguments is nil.
	if payload == (StreamDeltaPayload{Type: StreamDeltaToken, Content: payload.Content}) {
		env = event.Envelope{Subject: SubjectStreamDelta(runID, stepActor), Time: time.Now().UTC(), RunID: runID, Payload: encodeToken(payload.Content)}
		if stepActor != "" {
			env.AgentID, env.NodeID = ParseStepActor(stepActor)
		}
	} else if env, err = newEnvelope(SubjectStreamDelta(runID, stepActor), runID, stepActor, payload); err != nil {
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

// TokenStream publishes the text deltas of one step actor of a run. It
// builds the subject and routing fields once and encodes tokens by hand
// into shared chunks (see ActorEvents, which it wraps), so that a token
// costs a fraction of an allocation rather than a reflective encoding:
// engines stream thousands of them per run. Use it from one goroutine at
// a time.
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

// tokenPrefix opens a token payload; encodeToken and RawStreamToken agree
// on it. The members follow StreamDeltaPayload's field order, so the bytes
// are those json.Marshal produces.
const tokenPrefix = `{"type":"token","content":`

// encodeToken is json.Marshal(StreamDeltaPayload{Type: token, Content:
// content}) without reflection.
func encodeToken(content string) json.RawMessage {
	return appendToken(make([]byte, 0, len(tokenPrefix)+len(content)+3), content)
}

func appendToken(b []byte, content string) []byte {
	b = append(b, tokenPrefix...)
	b = model.AppendJSONString(b, content)
	return append(b, '}')
}

// The chunks a tokenArena carves payloads from start at firstTokenChunk
// bytes, a few typical tokens, and double up to tokenChunk, a dozen, so
// that short answers do not pay for long ones.
const (
	firstTokenChunk = 128
	tokenChunk      = 512
)

// tokenArena encodes token payloads into shared chunks, so that a stream
// of small tokens costs an allocation per chunk rather than per token.
// Each payload is capped at its own length: appending to it copies, and
// no later payload writes into it. A retained payload keeps its chunk
// alive, at most tokenChunk bytes or the payload itself when larger.
type tokenArena struct {
	buf []byte
}

func (a *tokenArena) encode(content string) json.RawMessage {
	if need := len(tokenPrefix) + len(content) + 3; cap(a.buf)-len(a.buf) < need {
		size := min(max(2*cap(a.buf), firstTokenChunk), tokenChunk)
		a.buf = make([]byte, 0, max(size, need))
	}
	// Escaping may outgrow the chunk; append then moves this payload
	// (and copies of the ones before it) to a larger one, which is
	// wasteful but safe: earlier payloads keep their own array.
	start := len(a.buf)
	a.buf = appendToken(a.buf, content)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// RawStreamToken returns the content of a token payload shaped exactly as
// EmitStreamToken encodes it — {"type":"token","content":"…"} and nothing
// else — as a JSON string, still encoded and validated, so that a consumer
// can splice it into its own JSON without decoding it. ok is false for any
// other payload (another type, more members, other spacing, an empty or
// invalid string): decode those with DecodeStreamDelta.
func RawStreamToken(payload []byte) (content json.RawMessage, ok bool) {
	if len(payload) < len(tokenPrefix)+3 || string(payload[:len(tokenPrefix)]) != tokenPrefix || payload[len(payload)-1] != '}' {
		return nil, false
	}
	raw := payload[len(tokenPrefix) : len(payload)-1]
	if len(raw) <= 2 || !validJSONString(raw) {
		return nil, false
	}
	return raw[:len(raw):len(raw)], true
}

// validJSONString reports whether b is exactly one JSON string literal of
// valid UTF-8, which encoding/json would decode without replacing bytes.
func validJSONString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	in := b[1 : len(b)-1]
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case c < 0x20 || c == '"':
			return false
		case c == '\\':
			i++
			if i == len(in) {
				return false
			}
			switch in[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(in) || !isHex(in[i+1]) || !isHex(in[i+2]) || !isHex(in[i+3]) || !isHex(in[i+4]) {
					return false
				}
				i += 4
			default:
				return false
			}
		}
	}
	return utf8.Valid(in)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
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
