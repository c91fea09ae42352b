package agui

import "strconv"

// A model's visible thinking (a reasoning log event, from a provider that
// streams reasoning_content) is shown apart from its answer. AG-UI: one
// span per run of reasoning events — REASONING_START and
// REASONING_MESSAGE_START (role "reasoning") before the first,
// REASONING_MESSAGE_CONTENT for each, REASONING_MESSAGE_END and
// REASONING_END before the next event of another kind. The AI SDK stream:
// reasoning-start, reasoning-delta, reasoning-end, likewise. The span's id
// is the run's id and the first reasoning event's seq, the same on every
// replay, so a client that reconnects gets the same ids.

// reasoningDelta is a reasoning event's AG-UI events.
func (t *translator) reasoningDelta(le logEvent) []Event {
	if le.Text == "" {
		return nil
	}
	var out []Event
	if t.reasoning == "" {
		t.reasoning = le.RunID + "-think" + strconv.FormatInt(le.Seq, 10)
		out = append(out, Event{Type: ReasoningStart, MessageID: t.reasoning},
			Event{Type: ReasoningMessageStart, MessageID: t.reasoning, Role: "reasoning"})
	}
	return append(out, Event{Type: ReasoningMessageContent, MessageID: t.reasoning, Delta: le.Text})
}

// endReasoning closes the open reasoning span.
func (t *translator) endReasoning() []Event {
	id := t.reasoning
	t.reasoning = ""
	return []Event{{Type: ReasoningMessageEnd, MessageID: id}, {Type: ReasoningEnd, MessageID: id}}
}

// reasoningDelta is a reasoning event's UI message stream chunks.
func (t *uiTranslator) reasoningDelta(le logEvent) []chunk {
	if le.Text == "" {
		return nil
	}
	var out []chunk
	if t.reasoning == "" {
		t.reasoning = le.RunID + "-think" + strconv.FormatInt(le.Seq, 10)
		out = append(out, chunk{Type: "reasoning-start", ID: t.reasoning})
	}
	return append(out, chunk{Type: "reasoning-delta", ID: t.reasoning, Delta: le.Text})
}

// endReasoning closes the open reasoning part.
func (t *uiTranslator) endReasoning() []chunk {
	id := t.reasoning
	t.reasoning = ""
	return []chunk{{Type: "reasoning-end", ID: id}}
}
