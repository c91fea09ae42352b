package agui

import (
	"encoding/json"
	"strings"
)

// The messages a run has shown, kept so that a recovery can take back
// what the cut attempt left half done. An attempt that recovers a run cut
// short by a crash produces its output again from the last checkpoint
// (unless its engine continues the cut output: run.start "continues"),
// so the message that was streaming when the replica died is abandoned:
// the translator then sends MESSAGES_SNAPSHOT with the thread's messages
// and the run's completed ones, which drops it from the client's list, and
// the new attempt's messages follow.

// shownMsg is a completed message; a text message keeps its text as the
// encoded literals it streamed, decoded only if a snapshot needs it.
type shownMsg struct {
	msg    Message
	pieces [][]byte
}

// shown records a completed message of the run.
func (t *translator) shown(m Message) {
	t.done_ = append(t.done_, shownMsg{msg: m})
}

// noteText records text (a JSON string literal) streamed into message id.
func (t *translator) noteText(id string, lit []byte) {
	t.partial[id] = append(t.partial[id], lit)
}

// endText completes message id.
func (t *translator) endText(id string) {
	if pieces, ok := t.partial[id]; ok {
		delete(t.partial, id)
		t.done_ = append(t.done_, shownMsg{msg: Message{ID: id, Role: "assistant"}, pieces: pieces})
	}
}

// message is m with its text decoded.
func (m shownMsg) message() Message {
	if m.pieces == nil {
		return m.msg
	}
	var b strings.Builder
	for _, p := range m.pieces {
		var s string
		_ = json.Unmarshal(p, &s)
		b.WriteString(s)
	}
	out := m.msg
	out.Content = text(b.String())
	return out
}

// recovered answers a recovery attempt's run.start: what was open is
// closed, and unless the engine continues its output the abandoned
// messages are taken back with a snapshot.
func (t *translator) recovered(le logEvent, continues bool) []Event {
	if continues {
		// The output goes on where it stopped: the text stays open.
		text := t.text
		t.text = map[string]string{}
		out := t.closeOpen(false)
		t.text = text
		return append(out, custom(le))
	}
	out := t.closeOpen(true)
	msgs := append([]Message{}, *t.snapshot...)
	for _, m := range t.done_ {
		msgs = append(msgs, m.message())
	}
	return append(out, custom(le), Event{Type: MessagesSnapshot, Messages: &msgs})
}
