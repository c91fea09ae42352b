package scripted

import (
	"context"
	"strconv"
	"strings"

	"agentd/internal/llm"
	"agentd/internal/model"
)

// The built-in digest answers a compaction request (llm.PurposeCompaction)
// that no rule with purpose: compaction matches: deterministically, the
// first digestWords words of each line of the conversation it is asked to
// summarise, at most digestLines lines (the latest ones), so that any
// scripted agent can be compacted in tests and the demo without a rule.
const (
	digestWords = 6
	digestLines = 12
)

// digest streams the built-in summary of the conversation in c.text.
func digest(ctx context.Context, c conversation) *stream {
	_, body, ok := strings.Cut(c.text, "\n\n")
	if !ok {
		body = c.text
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasSuffix(l, ":") && !strings.HasPrefix(l, "[") {
			continue // blank lines and section headings
		}
		words := strings.Fields(l)
		if len(words) > digestWords {
			words = append(words[:digestWords], "…")
		}
		lines = append(lines, strings.Join(words, " "))
	}
	if len(lines) > digestLines {
		lines = lines[len(lines)-digestLines:]
	}
	text := "Digest of " + strconv.Itoa(len(lines)) + " lines: " + strings.Join(lines, "; ")
	s := &stream{ctx: ctx, finish: llm.FinishStop, text: text, split: splitWords}
	s.usage.InputTokens = c.words
	return s
}

// summarisedTurns is how many assistant turns a compaction summary in a
// request stands for (llm.MetadataSummarisedTurns), so that call ids
// (call_<turn>_<n>) stay unique after a compaction.
func summarisedTurns(m model.Message) int {
	switch n := m.Metadata[llm.MetadataSummarisedTurns].(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}
