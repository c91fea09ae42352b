package runtime

import "agentd/internal/model"

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
