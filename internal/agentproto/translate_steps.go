package agentproto

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"agentd/internal/run"
)

// builder returns the model message actor is streaming, opening one named
// after seq when there is none.
func (t *translator) builder(actor string, seq int64) *aiBuild {
	b := t.building[actor]
	if b == nil {
		b = &aiBuild{id: idAt(t.runID, seq)}
		t.building[actor] = b
	}
	return b
}

func (b *aiBuild) message() lcMessage {
	calls := append([]lcToolCall{}, b.calls...)
	return lcMessage{Type: "ai", ID: b.id, Content: b.content(), ToolCalls: calls, AdditionalKwargs: map[string]any{}, ResponseMetadata: map[string]any{}}
}

// chunkJSON is a token (or a tool call) as LangChain's AIMessageChunk: a
// struct, which encodes several times faster than a map, for it is sent
// once per token.
//
// It carries what a chunk has: its type, id and content, and a tool
// call's tool_calls and tool_call_chunks. The members LangChain fills in
// with their empty defaults when they are absent (additional_kwargs,
// response_metadata, an empty tool_calls, invalid_tool_calls and
// tool_call_chunks) are left out: the SDK's MessageTupleManager builds
// the same AIMessageChunk without them, and a token's frame is a third
// shorter (the face's stream CPU is mostly bytes; docs/benchmarks.md).
//
// Content is the last member, so that a text chunk is written as the
// encoded rest (chunkPrefix, once per message) followed by the token
// (the token spliced after it still encoded, token.go).
type chunkJSON struct {
	Type           string          `json:"type"`
	ID             string          `json:"id"`
	ToolCalls      []lcToolCall    `json:"tool_calls,omitempty"`
	ToolCallChunks []toolCallChunk `json:"tool_call_chunks,omitempty"`
	Content        string          `json:"content"`
}

// chunkPrefix is a text chunk of message id encoded up to its content.
func chunkPrefix(id string) string {
	b, _ := json.Marshal(chunk(id, "", nil, 0))
	return string(bytes.TrimSuffix(b, []byte(`""}`)))
}

type toolCallChunk struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Args  string `json:"args"`
	Index int    `json:"index"`
	Type  string `json:"type"`
}

// encoded is frame data already encoded as JSON: the stream writes it as
// it is.
type encoded []byte

// tuple is the messages-tuple pair [chunk, metadata], its metadata encoded
// once per step.
func tuple(c *chunkJSON, meta json.RawMessage) encoded {
	b, err := json.Marshal(c)
	if err != nil {
		return encoded("null")
	}
	out := make([]byte, 0, len(b)+len(meta)+3)
	out = append(append(append(append(append(out, '['), b...), ','), meta...), ']')
	return out
}

func chunk(id, text string, call *lcToolCall, index int) *chunkJSON {
	c := &chunkJSON{Type: "AIMessageChunk", ID: id, Content: text}
	if call != nil {
		c.ToolCalls = []lcToolCall{*call}
		c.ToolCallChunks = []toolCallChunk{{ID: call.ID, Name: call.Name, Args: string(call.Args), Index: index, Type: "tool_call_chunk"}}
	}
	return c
}

func (t *translator) delta(out []frame, seq int64, d logData) []frame {
	if d.ToolResult != nil {
		return t.toolResult(out, seq, d)
	}
	b := t.builder(d.Actor, seq)
	var c *chunkJSON
	switch {
	case d.ToolCall != nil:
		call := lcToolCall{ID: d.ToolCall.ID, Name: d.ToolCall.Name, Args: argsOf(d.ToolCall.Arguments), Type: "tool_call"}
		b.calls = append(b.calls, call)
		c = chunk(b.id, "", &call, len(b.calls)-1)
	default:
		b.addText(d.Text)
		c = chunk(b.id, d.Text, nil, 0)
	}
	if t.modes["messages-tuple"] {
		out = append(out, frame{event: t.actor(d.Actor).tuple, data: tuple(c, t.metaJSON(d.Actor))})
	}
	return t.otherTokenModes(out, d.Actor, b, c)
}

// otherTokenModes are a token's frames in the modes other than
// messages-tuple: the message so far (messages), the model's stream event
// (events).
func (t *translator) otherTokenModes(out []frame, actor string, b *aiBuild, c *chunkJSON) []frame {
	if t.modes["messages"] {
		ns := t.actor(actor).ns
		if !b.announced {
			meta := map[string]any{"metadata": t.metaJSON(actor)}
			out = append(out, frame{event: t.msgEvent("messages/metadata", ns), data: map[string]any{b.id: meta}})
			b.announced = true
		}
		out = append(out, frame{event: t.msgEvent("messages/partial", ns), data: []lcMessage{b.message()}})
	}
	if t.modes["events"] {
		node, ns := t.where(actor)
		out = t.emit(out, "events", ns, t.lcEvent("on_chat_model_stream", node, b.id, map[string]any{"chunk": c}))
	}
	return out
}

// toolResult is a tool's answer: a ToolMessage of the tools node.
func (t *translator) toolResult(out []frame, seq int64, d logData) []frame {
	if b := t.building[d.Actor]; b != nil && len(b.calls) > 0 {
		out = t.finish(out, d.Actor) // the call before its result
	}
	a := t.actor(d.Actor)
	ns := a.ns
	r := d.ToolResult
	msg := lcMessage{Type: "tool", ID: idAt(t.runID, seq), Name: r.Name, Content: r.Content, ToolCallID: r.ToolCallID,
		AdditionalKwargs: map[string]any{}, ResponseMetadata: map[string]any{}, Status: "success"}
	if r.IsError {
		msg.Status = "error"
	}
	out = t.converse(out, a, msg)
	out = t.emit(out, "updates", ns, map[string]any{"tools": map[string]any{"messages": []lcMessage{msg}}})
	if t.modes["messages-tuple"] {
		out = append(out, frame{event: a.tuple, data: []any{msg, t.meta("tools", ns)}})
	}
	if t.modes["messages"] {
		out = append(out, frame{event: t.msgEvent("messages/complete", ns), data: []lcMessage{msg}})
	}
	if t.modes["events"] {
		out = t.emit(out, "events", ns, t.lcEvent("on_tool_end", r.Name, msg.ID, map[string]any{"output": msg}))
	}
	return out
}

// step is the detail of a step event.
func stepDetail(d logData) map[string]any {
	var detail map[string]any
	_ = json.Unmarshal(d.Payload.Detail, &detail)
	if detail == nil {
		detail = map[string]any{}
	}
	return detail
}

func (t *translator) stepStart(out []frame, seq int64, d logData) []frame {
	t.step++
	node, ns := t.where(d.Actor)
	detail := stepDetail(d)
	id := t.runID + ":" + strconv.FormatInt(seq, 10)
	t.tasks[d.Actor] = id
	switch d.Payload.Kind {
	case "model":
		delete(t.building, d.Actor)
		b := t.builder(d.Actor, seq)
		return t.emit(out, "events", ns, t.lcEvent("on_chat_model_start", node, b.id, map[string]any{"input": detail}))
	case "tool":
		name, _ := detail["tool"].(string)
		out = t.emit(out, "events", ns, t.lcEvent("on_tool_start", name, id, map[string]any{"input": detail}))
		node = "tools"
	default:
		out = t.emit(out, "events", ns, t.lcEvent("on_chain_start", node, id, map[string]any{"input": detail}))
	}
	task := map[string]any{"id": id, "name": node, "input": detail, "triggers": []string{"branch:to:" + node}}
	out = t.emit(out, "tasks", ns, task)
	return t.emit(out, "debug", ns, map[string]any{"type": "task", "step": t.step, "timestamp": d.Time, "payload": task})
}

func (t *translator) stepEnd(out []frame, failed bool, d logData) []frame {
	node, ns := t.where(d.Actor)
	detail := stepDetail(d)
	id := t.tasks[d.Actor]
	switch {
	case d.Payload.Kind == "tool":
		node = "tools"
	case t.building[d.Actor] != nil:
		// A model turn, or a node that said something (a flow's text).
		out = t.finish(out, d.Actor)
	case d.Payload.Kind != "model":
		out = t.emit(out, "updates", ns, map[string]any{node: detail})
		if t.modes["events"] {
			out = t.emit(out, "events", ns, t.lcEvent("on_chain_end", node, id, map[string]any{"output": detail}))
		}
	}
	var errText any
	if failed {
		errText, _ = detail["error"].(string)
		if errText == "" {
			errText = "step failed"
		}
	}
	result := map[string]any{"id": id, "name": node, "result": detail, "error": errText, "interrupts": []any{}}
	out = t.emit(out, "tasks", ns, result)
	return t.emit(out, "debug", ns, map[string]any{"type": "task_result", "step": t.step, "timestamp": d.Time, "payload": result})
}

// finish completes the message actor was streaming: it joins the
// conversation (values), updates its node, and completes in the message
// modes.
func (t *translator) finish(out []frame, actor string) []frame {
	b := t.building[actor]
	if b == nil {
		return out
	}
	delete(t.building, actor)
	a := t.actor(actor)
	node, ns := a.node, a.ns
	msg := b.message()
	out = t.converse(out, a, msg)
	out = t.emit(out, "updates", ns, map[string]any{node: map[string]any{"messages": []lcMessage{msg}}})
	if t.modes["messages"] {
		out = append(out, frame{event: t.msgEvent("messages/complete", ns), data: []lcMessage{msg}})
	}
	if t.modes["events"] {
		out = t.emit(out, "events", ns, t.lcEvent("on_chat_model_end", node, msg.ID, map[string]any{"output": msg}))
	}
	return out
}

// converse adds msg of actor a to the run's conversation when it is one
// of its messages (a.conv): the values, and for a hand-off's target an
// update of its node at the root.
func (t *translator) converse(out []frame, a *actorInfo, msg lcMessage) []frame {
	if !a.conv {
		return out
	}
	t.values = append(t.values, msg)
	if t.modes["values"] {
		out = t.emit(out, "values", nil, t.valuesNow())
	}
	if a.up != "" {
		out = t.emit(out, "updates", nil, map[string]any{a.up: map[string]any{"messages": []lcMessage{msg}}})
	}
	return out
}

// artifact is a workflow step's output: an update of its node and the
// state key steps.
func (t *translator) artifact(out []frame, d logData) []frame {
	if d.Artifact == nil || d.Artifact.Name == "" {
		return out
	}
	var text string
	for _, p := range d.Artifact.Parts {
		text += p.Text
	}
	steps, _ := t.extra["steps"].(map[string]any)
	if steps == nil {
		steps = map[string]any{}
		t.extra["steps"] = steps
	}
	steps[d.Artifact.Name] = text
	return t.emit(out, "updates", nil, map[string]any{d.Artifact.Name: map[string]any{"steps": map[string]any{d.Artifact.Name: text}}})
}

// checkpoints are the frames of the checkpoints the attempt wrote.
func (t *translator) checkpoints(out []frame) []frame {
	since, err := time.Parse(time.RFC3339Nano, t.attemptStart)
	for _, st := range t.src.runStates() {
		if err == nil && st.CreatedAt != nil && st.CreatedAt.Before(since) {
			continue // an earlier attempt's
		}
		out = t.emit(out, "checkpoints", nil, st)
		out = t.emit(out, "debug", nil, map[string]any{"type": "checkpoint", "step": st.Metadata["step"], "payload": st})
	}
	return out
}

// runEnd closes an attempt: an error frame when the run failed, then the
// final values and the checkpoints the run wrote, read from the store.
func (t *translator) runEnd(out []frame, d logData) []frame {
	if d.State == run.StateFailed || d.State == run.StateRejected {
		e := map[string]any{"error": "Error", "message": "the run " + string(d.State)}
		if d.Error != nil {
			e["error"], e["message"] = d.Error.Class, d.Error.Message
		}
		return append(out, frame{event: "error", data: e})
	}
	if !d.State.Terminal() && !d.State.Interrupted() {
		return out // cut short: the next attempt goes on
	}
	if t.modes["checkpoints"] || t.modes["debug"] {
		out = t.checkpoints(out)
	}
	if !d.State.Terminal() {
		return out // the interrupt's values are out
	}
	final := t.valuesNow()
	if t.modes["values"] || t.modes["events"] {
		if v := t.src.finalValues(); v != nil {
			final = v
		}
	}
	out = t.emit(out, "values", nil, final)
	return t.emit(out, "events", nil, t.lcEvent("on_chain_end", t.agentID, t.runID, map[string]any{"output": final}))
}
