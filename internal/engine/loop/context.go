package loop

import (
	"encoding/json"
	"strconv"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// Context regions. Every request the loop sends is built from four
// regions, in this order:
//
//   - the system prompt (Config.SystemPrompt and the tool declarations):
//     never evicted, never summarised;
//   - the compacted history: one system message holding the summary of
//     every message compaction has folded away (compact.go);
//   - the recent history: the main channel's messages the summary does
//     not cover, as they are;
//   - within them, the tool results: the first to go when the request
//     would pass the threshold — oldest first, a result's content is
//     replaced by a short placeholder (its message stays, so every call
//     keeps its result). The results of the latest exchange are kept.
//
// The request is sized in tokens against the model's window
// (Config.ContextWindow × Config.CompactThreshold, the limit): estimated
// with llm.EstimateMessages and, once the provider has reported the input
// tokens of a turn, scaled by the ratio of that report to the estimate of
// the same request — the provider's count is the truth, the estimate only
// extrapolates it to the messages added since. When the request would
// pass the limit, old tool results are elided; when that is not enough,
// the oldest history is summarised (compact.go); and as a last resort the
// longest texts of what is left are clipped in the middle, so that the
// request fits whatever the conversation holds.
//
// Elision and clipping are recomputed for every request from the board,
// deterministically; summaries are messages of the main channel (role
// system, metadata "compaction"), so they are in every later checkpoint
// and in the context's transcript: a resumed attempt and a later run of
// the same context reuse them instead of summarising again.

// Defaults of the context settings.
const (
	DefaultContextWindow    = 128_000
	DefaultCompactThreshold = 0.8
	// minContextWindow is the smallest window accepted: below it no
	// conversation fits beside a summary.
	minContextWindow = 256
)

// Placeholders the view puts in place of evicted text.
const (
	elidedResultFormat = "[tool result elided to save context: "
	clippedMarker      = "\n[… clipped to save context …]\n"
)

// validateContext checks and defaults the context settings.
func (cfg *Config) validateContext() error {
	if cfg.ContextWindow < 0 || cfg.ContextWindow > 0 && cfg.ContextWindow < minContextWindow {
		return errdefs.Validationf("%s: context_window %d: want at least %d tokens (0 for the default %d)", cfg.who(), cfg.ContextWindow, minContextWindow, DefaultContextWindow)
	}
	if cfg.ContextWindow == 0 {
		cfg.ContextWindow = DefaultContextWindow
	}
	if cfg.CompactThreshold < 0 || cfg.CompactThreshold > 1 {
		return errdefs.Validationf("%s: compact_threshold %v: want a fraction of the context window in (0, 1]", cfg.who(), cfg.CompactThreshold)
	}
	if cfg.CompactThreshold == 0 {
		cfg.CompactThreshold = DefaultCompactThreshold
	}
	return nil
}

// checkFixedRegion refuses a configuration whose system prompt and tool
// declarations alone take half the limit: no conversation would fit.
func (e *Engine) checkFixedRegion() error {
	if fixed, limit := e.fixedTokens(), e.limit(); fixed > limit/2 {
		return errdefs.Validationf("%s: context_window %d: the system prompt and tools take about %d tokens, more than half of the %d the compact_threshold %v leaves",
			e.cfg.who(), e.cfg.ContextWindow, fixed, limit, e.cfg.CompactThreshold)
	}
	return nil
}

// limit is the token count a request may reach before its history is
// evicted or compacted.
func (e *Engine) limit() int {
	return int(float64(e.cfg.ContextWindow) * e.cfg.CompactThreshold)
}

// fixedTokens estimates the system region: the prompt and the tools.
func (e *Engine) fixedTokens() int {
	n := llm.EstimateTools(e.specs)
	if e.cfg.SystemPrompt != "" {
		n += llm.MessageOverhead + llm.EstimateBytes(len(e.cfg.SystemPrompt))
	}
	return n
}

// contextState is what an execution knows of its requests' sizes.
type contextState struct {
	// sentEstimate is the estimate of the last request sent; ratio is the
	// provider's input tokens for it divided by that (0: not reported, or
	// not yet; the estimate is then taken as it is).
	sentEstimate int
	ratio        float64
	// last is the compaction made for the request being built (a pointer:
	// most runs never compact, and the execution stays small).
	last *compactionEvent
	// force compacts the next request whatever its size (an answer cut at
	// the length limit, with OnLength "compact"; finish.go).
	force bool
}

// counter sizes requests: estimates scaled by the provider's ratio.
type counter struct {
	fixed int
	ratio float64
}

func (c counter) count(msgs []model.Message) int {
	return c.scale(c.fixed + llm.EstimateMessages(msgs))
}

// observe calibrates the counter with a turn's reported usage. Ratios
// outside [1/4, 4] are taken for a provider that counts differently
// (cached prompts, a fixed count) and ignored.
func (s *contextState) observe(u model.TokenUsage) {
	if u.InputTokens <= 0 || s.sentEstimate <= 0 {
		return
	}
	r := float64(u.InputTokens) / float64(s.sentEstimate)
	if r >= 0.25 && r <= 4 {
		s.ratio = r
	}
}

// compactionMark is the metadata of a summary message on the board.
type compactionMark struct {
	// Kept counts the messages right before the summary (summaries left
	// out) that it does not cover: the recent history it was made with.
	Kept int `json:"kept"`
	// Messages and Turns count the messages, and the assistant messages
	// among them, that this summary and those before it stand for.
	Messages int `json:"messages"`
	Turns    int `json:"turns"`
}

// MetadataCompaction marks a summary message of the main channel; its
// value is the compaction's bookkeeping (kept, messages, turns).
const MetadataCompaction = "compaction"

// markOf returns the compaction mark of m, if it is a summary.
func markOf(m model.Message) (compactionMark, bool) {
	v, ok := m.Metadata[MetadataCompaction]
	if !ok || m.Role != model.RoleSystem {
		return compactionMark{}, false
	}
	var mark compactionMark
	switch t := v.(type) {
	case compactionMark:
		return t, true
	default: // as decoded from a checkpoint or the store
		b, err := json.Marshal(t)
		if err != nil || json.Unmarshal(b, &mark) != nil {
			return compactionMark{}, false
		}
	}
	return mark, true
}

// regions splits the main channel into the latest summary (nil when there
// is none) and the recent history after it.
func regions(hist []model.Message) (summary *model.Message, mark compactionMark, recent []model.Message) {
	at := -1
	for i := len(hist) - 1; i >= 0; i-- {
		if m, ok := markOf(hist[i]); ok {
			at, mark = i, m
			break
		}
	}
	if at < 0 {
		if !hasMarks(hist) {
			return nil, mark, hist
		}
		return nil, mark, withoutMarks(hist)
	}
	from := at
	for kept := 0; from > 0 && kept < mark.Kept; from-- {
		if _, ok := markOf(hist[from-1]); !ok {
			kept++
		}
	}
	recent = withoutMarks(hist[from:at])
	recent = append(recent, withoutMarks(hist[at+1:])...)
	return &hist[at], mark, recent
}

func hasMarks(msgs []model.Message) bool {
	for i := range msgs {
		if _, ok := markOf(msgs[i]); ok {
			return true
		}
	}
	return false
}

func withoutMarks(msgs []model.Message) []model.Message {
	out := make([]model.Message, 0, len(msgs))
	for _, m := range msgs {
		if _, ok := markOf(m); !ok {
			out = append(out, m)
		}
	}
	return out
}

// summaryMessage is the compacted region of a request: the summary as a
// system message, which tells the provider how many assistant turns it
// stands for (llm.MetadataSummarisedTurns).
func summaryMessage(summary *model.Message, mark compactionMark) []model.Message {
	if summary == nil {
		return nil
	}
	text := "Summary of the earlier conversation (" + strconv.Itoa(mark.Messages) + " messages):\n" + summary.Text()
	m := model.NewText(model.RoleSystem, text)
	m.Metadata = map[string]any{llm.MetadataSummarisedTurns: mark.Turns}
	return []model.Message{m}
}

// unitStarts lists where each exchange of msgs begins: an assistant
// message and the tool results that follow it are one exchange (parallel
// calls included), any other message is one on its own. Compaction and
// eviction cut only between exchanges, so a call never loses its result.
func unitStarts(msgs []model.Message) []int {
	starts := make([]int, 0, len(msgs))
	for i := range msgs {
		if i > 0 && isToolResult(msgs[i]) && (len(msgs[i-1].ToolCalls()) > 0 || isToolResult(msgs[i-1])) {
			continue
		}
		starts = append(starts, i)
	}
	return starts
}

func isToolResult(m model.Message) bool {
	for _, p := range m.Parts {
		if p.Type == model.PartToolResult {
			return true
		}
	}
	return false
}
