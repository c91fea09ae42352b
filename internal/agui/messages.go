package agui

// The messages a run has shown, kept so that a recovery can take back
// what the cut attempt left half done. An attempt that recovers a run cut
// short by a crash produces its output again from the last checkpoint
// (unless its engine continues the cut output: run.start "continues"),
// so the message that was streaming when the replica died is abandoned:
// the translator then sends MESSAGES_SNAPSHOT with the thread's messages
// and the run's completed ones, which drops it from the client's list, and
// the new attempt's messages follow.

// shown records a completed message of the run.
func (t *translator) shown(m Message) {
	t.done_ = append(t.done_, m)
}

// noteText records text streamed into message id.
func (t *translator) noteText(id, delta string) {
	t.partial[id] += delta
}

// endText completes message id.
func (t *translator) endText(id string) {
	if s, ok := t.partial[id]; ok {
		delete(t.partial, id)
		t.shown(Message{ID: id, Role: "assistant", Content: text(s)})
	}
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
	msgs := append(append([]Message{}, *t.snapshot...), t.done_...)
	return append(out, custom(le), Event{Type: MessagesSnapshot, Messages: &msgs})
}
