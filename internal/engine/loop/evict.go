package loop

import (
	"strconv"

	"agentd/internal/llm"
	"agentd/internal/model"
)

// Eviction works on a request's view of the history (the compacted and
// recent regions), never on the board: it replaces contents in copies of
// the messages it touches. Both steps keep every message, so no tool call
// ever loses its result.

// sized is a view with its unscaled token estimate, kept up to date as
// the view is edited.
type sized struct {
	msgs []model.Message
	est  int // llm.EstimateMessages(msgs)
	c    counter
}

func newSized(c counter, msgs []model.Message) *sized {
	return &sized{msgs: msgs, est: llm.EstimateMessages(msgs), c: c}
}

// tokens is the view's size as the counter reckons it.
func (s *sized) tokens() int { return s.c.scale(s.c.fixed + s.est) }

// set replaces message i (which must already be a copy) and updates est.
func (s *sized) set(i int, m model.Message) {
	s.est += llm.EstimateMessage(m) - llm.EstimateMessage(s.msgs[i])
	s.msgs[i] = m
}

// lastUnit is where the view's latest exchange begins: the one the model
// answers now, which eviction spares as long as anything else is left.
func lastUnit(msgs []model.Message) int {
	starts := unitStarts(msgs)
	if len(starts) == 0 {
		return 0
	}
	return starts[len(starts)-1]
}

// elideResults replaces the content of tool results with a placeholder,
// oldest first, sparing the latest exchange, until the view fits limit.
// It returns how many results it elided.
func (s *sized) elideResults(limit int) int {
	elided := 0
	end := lastUnit(s.msgs)
	for i := 0; i < end && s.tokens() > limit; i++ {
		m := s.msgs[i]
		var parts []model.Part
		for j, p := range m.Parts {
			if p.ToolResult == nil {
				continue
			}
			placeholder := elidedResultFormat + strconv.Itoa(len(p.ToolResult.Content)) + " bytes]"
			if len(p.ToolResult.Content) <= len(placeholder) {
				continue
			}
			if parts == nil {
				parts = append([]model.Part(nil), m.Parts...)
			}
			r := *p.ToolResult
			r.Content = placeholder
			parts[j].ToolResult = &r
			elided++
		}
		if parts != nil {
			m.Parts = parts
			s.set(i, m)
		}
	}
	return elided
}

// minClip is the shortest text clipping shortens further.
const minClip = 512

// clip is the last resort when the view still does not fit (an exchange
// too long on its own, a summary at its cap): it halves the longest text
// or tool-result content, keeping its head and tail, until the view fits
// or nothing longer than minClip bytes is left. Tool-call arguments are
// left alone: they must stay valid JSON.
func (s *sized) clip(limit int) int {
	clipped := 0
	for s.tokens() > limit {
		i, j := s.longest()
		if i < 0 {
			return clipped
		}
		m := s.msgs[i]
		m.Parts = append([]model.Part(nil), m.Parts...)
		p := &m.Parts[j]
		if p.ToolResult != nil {
			r := *p.ToolResult
			r.Content = halve(r.Content)
			p.ToolResult = &r
		} else {
			p.Text = halve(p.Text)
		}
		s.set(i, m)
		clipped++
	}
	return clipped
}

// longest finds the longest clippable content of the view: message i,
// part j (-1, -1 when none is longer than minClip).
func (s *sized) longest() (int, int) {
	bi, bj, best := -1, -1, minClip
	for i, m := range s.msgs {
		for j, p := range m.Parts {
			n := len(p.Text)
			if p.ToolResult != nil {
				n = len(p.ToolResult.Content)
			}
			if n > best {
				bi, bj, best = i, j, n
			}
		}
	}
	return bi, bj
}

// halve keeps the first and last quarter of s around a marker, cutting on
// UTF-8 boundaries.
func halve(s string) string {
	q := len(s) / 4
	head, tail := q, len(s)-q
	for head > 0 && !runeStart(s[head]) {
		head--
	}
	for tail < len(s) && !runeStart(s[tail]) {
		tail++
	}
	return s[:head] + clippedMarker + s[tail:]
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// scale turns an estimate into the counter's reckoning.
func (c counter) scale(est int) int {
	if c.ratio > 0 {
		return int(float64(est) * c.ratio)
	}
	return est
}
