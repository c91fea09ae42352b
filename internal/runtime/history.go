package runtime

import "agentd/internal/model"

// DefaultHistoryLimit is how many of a context's latest transcript
// messages seed a run's board when Agent.HistoryLimit is zero.
//
// The limit is an upper bound, not the way a long conversation is kept
// within the model's window: the loop engine does that itself, by tokens
// (engine/loop, context.go), summarising the oldest history into summary
// messages that are part of the transcript. A window that holds the latest
// summary therefore loses nothing; the default is large enough that in
// practice it always does, while bounding what one run reads.
const DefaultHistoryLimit = 1000

// historyLimit is a's HistoryLimit or the default.
func (a *Agent) historyLimit() int {
	if a.HistoryLimit > 0 {
		return a.HistoryLimit
	}
	return DefaultHistoryLimit
}

// withoutOrphanedResults drops the tool results at the head of a history
// window whose calls fell outside it: a window cut by message count may
// start between an assistant's tool calls and their results, and a model
// request that opens with results of calls it never made is refused by
// OpenAI-compatible endpoints. Calls come before their results, so only the
// head can hold orphans.
func withoutOrphanedResults(msgs []model.Message) []model.Message {
	for len(msgs) > 0 && hasToolResult(msgs[0]) {
		msgs = msgs[1:]
	}
	return msgs
}

func hasToolResult(m model.Message) bool {
	for _, p := range m.Parts {
		if p.Type == model.PartToolResult {
			return true
		}
	}
	return false
}
