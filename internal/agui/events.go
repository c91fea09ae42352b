package agui

import (
	"bytes"
	"encoding/json"

	"agentd/internal/runtime"

	"agentd/internal/model"
	"agentd/internal/run"
)

// AG-UI 1.0 event types this face sends.
const (
	RunStarted         = "RUN_STARTED"
	RunFinished        = "RUN_FINISHED"
	RunError           = "RUN_ERROR"
	TextMessageStart   = "TEXT_MESSAGE_START"
	TextMessageContent = "TEXT_MESSAGE_CONTENT"
	TextMessageEnd     = "TEXT_MESSAGE_END"
	// The reasoning events (reasoning.go).
	ReasoningStart          = "REASONING_START"
	ReasoningMessageStart   = "REASONING_MESSAGE_START"
	ReasoningMessageContent = "REASONING_MESSAGE_CONTENT"
	ReasoningMessageEnd     = "REASONING_MESSAGE_END"
	ReasoningEnd            = "REASONING_END"
	ToolCallStart           = "TOOL_CALL_START"
	ToolCallArgs            = "TOOL_CALL_ARGS"
	ToolCallEnd             = "TOOL_CALL_END"
	ToolCallResult          = "TOOL_CALL_RESULT"
	StepStarted             = "STEP_STARTED"
	StepFinished            = "STEP_FINISHED"
	StateSnapshot           = "STATE_SNAPSHOT"
	StateDelta              = "STATE_DELTA"
	MessagesSnapshot        = "MESSAGES_SNAPSHOT"
	Custom                  = "CUSTOM"
)

// ProtocolVersion is the AG-UI version this face speaks.
const ProtocolVersion = "1.0"

// Event is one AG-UI event. Only the members of its type are set; the
// others are omitted, as the protocol's closed objects want.
type Event struct {
	Type            string          `json:"type"`
	ThreadID        string          `json:"threadId,omitempty"`
	RunID           string          `json:"runId,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	MessageID       string          `json:"messageId,omitempty"`
	Role            string          `json:"role,omitempty"`
	Delta           any             `json:"delta,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	ToolCallName    string          `json:"toolCallName,omitempty"`
	ParentMessageID string          `json:"parentMessageId,omitempty"`
	Content         *string         `json:"content,omitempty"`
	StepName        string          `json:"stepName,omitempty"`
	Snapshot        any             `json:"snapshot,omitempty"`
	Messages        *[]Message      `json:"messages,omitempty"`
	Name            string          `json:"name,omitempty"`
	Value           json.RawMessage `json:"value,omitempty"`
	Outcome         *Outcome        `json:"outcome,omitempty"`
	Usage           []Usage         `json:"usage,omitempty"`
	Message         string          `json:"message,omitempty"`
	Code            string          `json:"code,omitempty"`
	// Metadata is RUN_FINISHED's: {"outcome": "partial"} for a workflow
	// that completed only some of its steps.
	Metadata map[string]any `json:"metadata,omitempty"`
	// raw, when set, is the event already encoded (the token fast path).
	raw []byte
}

// Outcome is RUN_FINISHED's outcome: success (with the frontend tool calls
// left to answer), interrupt or cancelled.
type Outcome struct {
	Type               string      `json:"type"`
	PendingToolCallIDs []string    `json:"pendingToolCallIds,omitempty"`
	Interrupts         []Interrupt `json:"interrupts,omitempty"`
}

// Outcome types.
const (
	OutcomeSuccess   = "success"
	OutcomeInterrupt = "interrupt"
	OutcomeCancelled = "cancelled"
)

// Interrupt is something an interrupted run waits for: a tool call's
// approval or an answer.
type Interrupt struct {
	ID             string         `json:"id"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message,omitempty"`
	ToolCallID     string         `json:"toolCallId,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
}

// Usage is one entry of a run's token usage.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	TotalTokens  int64 `json:"totalTokens"`
}

// PatchOp is one JSON Patch (RFC 6902) operation of a STATE_DELTA.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Message is a message of a MESSAGES_SNAPSHOT (and of RunAgentInput).
type Message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []ToolCall      `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// ToolCall is a tool call of an assistant message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is what a tool call calls.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func usageOf(u model.TokenUsage) []Usage {
	if u == (model.TokenUsage{}) {
		return nil
	}
	return []Usage{{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}}
}

// logEvent is an agentd log event's data, decoded once: the union of the
// members of every event type the faces read.
type logEvent struct {
	Seq        int64             `json:"seq"`
	Type       string            `json:"type"`
	RunID      string            `json:"run_id"`
	Attempt    int               `json:"attempt"`
	Resumed    string            `json:"resumed"`
	State      run.TaskState     `json:"state"`
	Error      *run.TaskError    `json:"error"`
	Usage      model.TokenUsage  `json:"usage"`
	Actor      string            `json:"actor"`
	Text       string            `json:"text"`
	ToolCall   *model.ToolCall   `json:"tool_call"`
	ToolResult *model.ToolResult `json:"tool_result"`
	Payload    json.RawMessage   `json:"payload"`
	Plan       json.RawMessage   `json:"plan"`
	Prompt     *model.Message    `json:"prompt"`
	Schema     json.RawMessage   `json:"schema"`
	Outcome    string            `json:"outcome"`
	// raw is the whole data, as CUSTOM events carry it.
	raw json.RawMessage
	// textLit is a text delta's text still encoded (a JSON string literal),
	// when the fast path read it; Text is empty then.
	textLit []byte
}

// text is a text delta's text, decoded.
func (le logEvent) text() string {
	if le.textLit == nil {
		return le.Text
	}
	var s string
	_ = json.Unmarshal(le.textLit, &s)
	return s
}

// fastDelta reads a plain token's delta event without decoding it: the
// bulk of every stream. ok is false for any other shape.
func fastDelta(ev run.Event) (logEvent, bool) { return (&logDecoder{}).fastDelta(ev) }

// logDecoder decodes one stream's log events; it remembers the last
// actor, so that a run of tokens from one actor shares its string.
type logDecoder struct{ actor string }

func (dec *logDecoder) fastDelta(ev run.Event) (logEvent, bool) {
	actorLit, lit, ok := runtime.TokenLiterals(ev.Data)
	if !ok {
		return logEvent{}, false
	}
	actor := actorLit[1 : len(actorLit)-1]
	if bytes.IndexByte(actor, '\\') >= 0 {
		return logEvent{}, false // an escaped actor takes the decoding path
	}
	if string(actor) != dec.actor { // compared without a copy
		dec.actor = string(actor)
	}
	return logEvent{Seq: ev.Seq, Type: ev.Type, RunID: ev.RunID, Actor: dec.actor, textLit: lit, raw: ev.Data}, true
}

func decodeLogEvent(ev run.Event) (logEvent, error) { return (&logDecoder{}).decode(ev) }

func (d *logDecoder) decode(ev run.Event) (logEvent, error) {
	if ev.Type == runtime.EventDelta && ev.RunID != "" {
		if le, ok := d.fastDelta(ev); ok {
			return le, nil
		}
	}
	var le logEvent
	if err := json.Unmarshal(ev.Data, &le); err != nil {
		return le, err
	}
	le.Seq, le.Type, le.raw = ev.Seq, ev.Type, ev.Data
	return le, nil
}

// stepPayload is the payload of a step event.
type stepPayload struct {
	Actor  string `json:"actor"`
	Kind   string `json:"kind"`
	Detail struct {
		Iteration int    `json:"iteration"`
		CallID    string `json:"call_id"`
		Step      string `json:"step"`
		Node      string `json:"node"`
		Status    string `json:"status"`
	} `json:"detail"`
}

// MarshalJSON writes the event: its fast-path encoding, if it has one.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.raw != nil {
		return e.raw, nil
	}
	type plain Event
	return json.Marshal(plain(e))
}
