package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"agentd/internal/model"
)

// MetadataReasoning is the message metadata key under which Accumulator
// keeps the turn's reasoning text.
const MetadataReasoning = "reasoning"

// Accumulator reassembles the chunks of one turn. Callers that forward
// deltas as they arrive feed it chunk by chunk; Collect does both at once.
// The zero value is ready to use.
type Accumulator struct {
	text      joined
	reasoning joined
	calls     []callBuffer // in order of first appearance
	usage     model.TokenUsage
	finish    string
}

type callBuffer struct {
	index int
	id    string
	name  string
	args  []byte
}

// Add folds one chunk into the turn.
func (a *Accumulator) Add(c Chunk) {
	a.text.add(c.Text)
	a.reasoning.add(c.Reasoning)
	for _, d := range c.ToolCalls {
		a.addCall(d)
	}
	if c.Usage != nil {
		a.usage = *c.Usage
	}
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
}

func (a *Accumulator) addCall(d ToolCallDelta) {
	b := a.call(d.Index)
	if b.id == "" {
		b.id = d.ID
	}
	// Most servers send the name once; a few repeat it whole on every
	// fragment, and a few split it. Appending only what differs handles all
	// three.
	if d.Name != "" && d.Name != b.name {
		b.name += d.Name
	}
	b.args = append(b.args, d.Arguments...)
}

func (a *Accumulator) call(index int) *callBuffer {
	for i := range a.calls {
		if a.calls[i].index == index {
			return &a.calls[i]
		}
	}
	a.calls = append(a.calls, callBuffer{index: index})
	return &a.calls[len(a.calls)-1]
}

// joined concatenates streamed text. Text that arrives in one piece is
// kept as it came, without a copy; a second piece starts a buffer. The
// zero value is empty.
type joined struct {
	first string
	more  bool // b holds everything, first included
	b     strings.Builder
}

func (j *joined) add(s string) {
	switch {
	case s == "":
	case j.more:
		j.b.WriteString(s)
	case j.first == "":
		j.first = s
	default:
		j.more = true
		j.b.Grow(len(j.first) + len(s))
		j.b.WriteString(j.first)
		j.b.WriteString(s)
	}
}

func (j *joined) Len() int {
	if j.more {
		return j.b.Len()
	}
	return len(j.first)
}

func (j *joined) String() string {
	if j.more {
		return j.b.String()
	}
	return j.first
}

// Message returns the assistant message assembled so far: one text part (if
// any text arrived), then one tool-call part per call in order of first
// appearance. Reasoning goes to Metadata[MetadataReasoning].
func (a *Accumulator) Message() model.Message {
	msg := model.Message{Role: model.RoleAssistant}
	if a.text.Len() > 0 {
		msg.Parts = append(msg.Parts, model.TextPart(a.text.String()))
	}
	for i := range a.calls {
		b := &a.calls[i]
		id := b.id
		if id == "" {
			id = "call_" + strconv.Itoa(b.index)
		}
		msg.Parts = append(msg.Parts, model.ToolCallPart(model.ToolCall{
			ID: id, Name: b.name, Arguments: arguments(b.args),
		}))
	}
	if msg.Parts == nil {
		msg.Parts = []model.Part{}
	}
	if a.reasoning.Len() > 0 {
		msg.Metadata = map[string]any{MetadataReasoning: a.reasoning.String()}
	}
	return msg
}

// arguments turns the joined fragments into JSON. Models sometimes emit
// malformed arguments; those are kept as a JSON string so the message stays
// encodable and the tool's schema validation reports the problem back to
// the model instead of the turn failing here.
func arguments(b []byte) json.RawMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(b) {
		return slices.Clone(b)
	}
	q, _ := json.Marshal(string(b)) // a string always encodes
	return q
}

// Usage returns the last usage a chunk reported.
func (a *Accumulator) Usage() model.TokenUsage { return a.usage }

// FinishReason returns the turn's finish reason. Some servers (Ollama) say
// "stop" even when the model asked for tools, so a turn with tool calls
// always reports FinishToolCalls.
func (a *Accumulator) FinishReason() string {
	if len(a.calls) > 0 && (a.finish == "" || a.finish == FinishStop) {
		return FinishToolCalls
	}
	return a.finish
}

// Collect drains and closes s, returning the assembled assistant message,
// the turn's usage and its finish reason. On error the message holds what
// arrived before it.
func Collect(s Stream) (model.Message, model.TokenUsage, string, error) {
	defer s.Close()
	var acc Accumulator
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			return acc.Message(), acc.Usage(), acc.FinishReason(), nil
		}
		if err != nil {
			return acc.Message(), acc.Usage(), acc.FinishReason(), err
		}
		acc.Add(c)
	}
}
