package agui

import (
	"encoding/json"
	"strconv"
	"strings"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// chunk is one part of the AI SDK UI message stream (protocol v1). Only
// the members of its type are set.
type chunk struct {
	Type         string          `json:"type"`
	MessageID    string          `json:"messageId,omitempty"`
	ID           string          `json:"id,omitempty"`
	Delta        string          `json:"delta,omitempty"`
	ToolCallID   string          `json:"toolCallId,omitempty"`
	ToolName     string          `json:"toolName,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Output       *string         `json:"output,omitempty"`
	ErrorText    string          `json:"errorText,omitempty"`
	Dynamic      bool            `json:"dynamic,omitempty"`
	Data         any             `json:"data,omitempty"`
	FinishReason string          `json:"finishReason,omitempty"`
	// MessageMetadata is a finish chunk's: {"outcome": "partial"} for a
	// workflow that completed partially (the message's metadata in the
	// client, as AG-UI's RUN_FINISHED metadata).
	MessageMetadata map[string]any `json:"messageMetadata,omitempty"`
	Reason          string         `json:"reason,omitempty"`
	// raw, when set, is the chunk already encoded (the token fast path).
	raw []byte
}

// uiTranslator turns one face run (as translator does for AG-UI) into UI
// message stream chunks: one assistant message per run.
type uiTranslator struct {
	started, finished bool
	text              map[string]string // actor → open text part id
	prompt            *logEvent         // the last input event
	plan              map[string]bool   // the plan's step ids
	// calls are the tool calls announced in this stream: a result of one
	// made in an earlier attempt (an approved call) announces it first,
	// as the stream's message has no part for it yet.
	calls map[string]bool
	steps int // model steps started and not finished
	// reasoning is the open reasoning part's id (reasoning.go).
	reasoning string
}

func newUITranslator() *uiTranslator {
	return &uiTranslator{text: map[string]string{}, calls: map[string]bool{}}
}

func (t *uiTranslator) translate(le logEvent) []chunk {
	if t.finished {
		return nil
	}
	if !t.started {
		// The stream's first event (a gap, when retention pruned the start).
		t.started = true
		start := chunk{Type: "start", MessageID: le.RunID + "-a" + strconv.FormatInt(le.Seq, 10)}
		if le.Type == runtime.EventRunStart {
			return []chunk{start}
		}
		return append([]chunk{start}, t.translate(le)...)
	}
	if t.reasoning != "" && le.Type != runtime.EventReasoning {
		return append(t.endReasoning(), t.translateEvent(le)...)
	}
	return t.translateEvent(le)
}

// translateEvent is translate past the stream's start and its reasoning.
func (t *uiTranslator) translateEvent(le logEvent) []chunk {
	switch le.Type {
	case runtime.EventReasoning:
		return t.reasoningDelta(le)
	case runtime.EventRunStart:
		return append(t.closeText(), dataChunk(le))
	case runtime.EventRunEnd:
		return t.runEnd(le)
	case runtime.EventDelta:
		return t.delta(le)
	case runtime.EventStepStart, runtime.EventStepComplete, runtime.EventStepError:
		return t.step(le)
	case runtime.EventPlan:
		return t.planChunk(le)
	case runtime.EventInput:
		p := le
		t.prompt = &p
		return nil
	case runtime.EventStatus:
		return nil
	}
	return []chunk{dataChunk(le)}
}

// dataChunk carries an agentd event as a data part "data-agentd-<type>"
// with the event's data, one part per event.
func dataChunk(le logEvent) chunk {
	return chunk{Type: "data-agentd-" + strings.ReplaceAll(le.Type, ".", "-"), ID: le.RunID + "-e" + strconv.FormatInt(le.Seq, 10), Data: le.raw}
}

func (t *uiTranslator) closeText() []chunk {
	var out []chunk
	for _, actor := range sortedKeys(t.text) {
		out = append(out, chunk{Type: "text-end", ID: t.text[actor]})
		delete(t.text, actor)
	}
	return out
}

func (t *uiTranslator) delta(le logEvent) []chunk {
	switch {
	case le.ToolCall != nil:
		id := ToolCallIDOf(le.RunID, le.ToolCall.ID)
		input := le.ToolCall.Arguments
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		t.calls[id] = true
		return []chunk{
			{Type: "tool-input-start", ToolCallID: id, ToolName: le.ToolCall.Name, Dynamic: true},
			{Type: "tool-input-available", ToolCallID: id, ToolName: le.ToolCall.Name, Input: input, Dynamic: true},
		}
	case le.ToolResult != nil:
		id := ToolCallIDOf(le.RunID, le.ToolResult.ToolCallID)
		var out []chunk
		if !t.calls[id] {
			t.calls[id] = true
			out = append(out, chunk{Type: "tool-input-available", ToolCallID: id, ToolName: le.ToolResult.Name, Input: json.RawMessage("{}"), Dynamic: true})
		}
		if le.ToolResult.IsError {
			return append(out, chunk{Type: "tool-output-error", ToolCallID: id, ErrorText: le.ToolResult.Content, Dynamic: true})
		}
		content := le.ToolResult.Content
		return append(out, chunk{Type: "tool-output-available", ToolCallID: id, Output: &content, Dynamic: true})
	case le.Text == "" && le.textLit == nil:
		return nil
	}
	var out []chunk
	id, open := t.text[le.Actor]
	if !open {
		id = le.RunID + "-t" + strconv.FormatInt(le.Seq, 10)
		t.text[le.Actor] = id
		out = append(out, chunk{Type: "text-start", ID: id})
	}
	lit := le.textLit
	if lit == nil {
		lit, _ = json.Marshal(le.Text)
	}
	b := make([]byte, 0, 48+len(id)+len(lit))
	b = append(b, `{"type":"text-delta","id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"delta":`...)
	b = append(append(b, lit...), '}')
	return append(out, chunk{Type: "text-delta", raw: b})
}

// step: a model step is a UI step (start-step / finish-step); a workflow
// step's status is a data part "data-step" reconciled by its id.
func (t *uiTranslator) step(le logEvent) []chunk {
	var p stepPayload
	_ = json.Unmarshal(le.Payload, &p)
	var out []chunk
	if p.Kind == "model" {
		if le.Type == runtime.EventStepStart {
			t.steps++
			return []chunk{{Type: "start-step"}}
		}
		if id, open := t.text[le.Actor]; open {
			out = append(out, chunk{Type: "text-end", ID: id})
			delete(t.text, le.Actor)
		}
		if t.steps == 0 {
			return out // its start-step is not in this stream
		}
		t.steps--
		return append(out, chunk{Type: "finish-step"})
	}
	if t.plan[p.Detail.Step] {
		status := "running"
		switch le.Type {
		case runtime.EventStepComplete:
			status = "completed"
		case runtime.EventStepError:
			status = "failed"
		}
		out = append(out, chunk{Type: "data-step", ID: "step-" + p.Detail.Step, Data: map[string]string{"step": p.Detail.Step, "status": status}})
	}
	return out
}

func (t *uiTranslator) planChunk(le logEvent) []chunk {
	var p struct {
		Steps []struct {
			ID string `json:"id"`
		} `json:"steps"`
	}
	_ = json.Unmarshal(le.Plan, &p)
	t.plan = map[string]bool{}
	for _, s := range p.Steps {
		t.plan[s.ID] = true
	}
	return []chunk{{Type: "data-plan", ID: "plan", Data: le.Plan}}
}

func (t *uiTranslator) runEnd(le logEvent) []chunk {
	if !le.State.Terminal() && !le.State.Interrupted() {
		return []chunk{dataChunk(le)}
	}
	t.finished = true
	out := t.closeText()
	switch {
	case le.State == run.StateCompleted:
		fin := chunk{Type: "finish", FinishReason: "stop"}
		if le.Outcome != "" {
			fin.MessageMetadata = map[string]any{"outcome": le.Outcome} // a partial workflow
		}
		return append(out, fin)
	case le.State == run.StateCanceled:
		return append(out, chunk{Type: "abort", Reason: "canceled"})
	case le.State.Interrupted():
		if t.prompt != nil {
			out = append(out, chunk{Type: "data-agentd-interrupt", ID: le.RunID + "-interrupt",
				Data: outcomeOf(le.RunID, t.prompt.Prompt, t.prompt.Schema)})
		}
		return append(out, chunk{Type: "finish", FinishReason: "other"})
	}
	msg := "the run " + string(le.State)
	if le.Error != nil && le.Error.Message != "" {
		msg = le.Error.Message
	}
	return append(out, chunk{Type: "error", ErrorText: msg})
}

// MarshalJSON writes the chunk: its fast-path encoding, if it has one.
func (c chunk) MarshalJSON() ([]byte, error) {
	if c.raw != nil {
		return c.raw, nil
	}
	type plain chunk
	return json.Marshal(plain(c))
}
