package scripted

import (
	"context"
	"io"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"agentd/internal/llm"
	"agentd/internal/model"
)

// stream emits a rendered reply: text tokens, then tool calls, then one
// chunk with usage and the finish reason. It runs in the caller's
// goroutine; pacing waits inside Next.
type stream struct {
	// ctx is checked with Err between chunks; Done is asked for only
	// when pacing waits, so that a context that starts work for Done
	// (see the loop engine's interrupt watch) does so only when needed.
	ctx context.Context

	think []string // reasoning tokens, streamed before the reply
	text  string   // reply text, consumed from pos
	pos   int
	split splitMode
	gen   generator // used when the rule counts

	calls []llm.ToolCallDelta
	next  int // next call to emit

	delay time.Duration
	due   time.Time // when the next token is due
	timer *time.Timer

	usage  model.TokenUsage
	finish string
	ended  bool // the usage chunk went out
	closed bool
}

// Next returns the next token, tool call or the final usage chunk.
func (s *stream) Next() (llm.Chunk, error) {
	if s.closed {
		return llm.Chunk{}, llm.ErrClosed
	}
	if err := s.ctx.Err(); err != nil {
		return llm.Chunk{}, err
	}
	if len(s.think) > 0 {
		if err := s.pace(); err != nil {
			return llm.Chunk{}, err
		}
		tok := s.think[0]
		s.think = s.think[1:]
		s.usage.OutputTokens++
		return llm.Chunk{Reasoning: tok}, nil
	}
	if tok, ok := s.token(); ok {
		if err := s.pace(); err != nil {
			return llm.Chunk{}, err
		}
		s.usage.OutputTokens++
		return llm.Chunk{Text: tok}, nil
	}
	if s.next < len(s.calls) {
		if err := s.pace(); err != nil {
			return llm.Chunk{}, err
		}
		c := s.calls[s.next : s.next+1 : s.next+1]
		s.next++
		s.usage.OutputTokens++
		return llm.Chunk{ToolCalls: c}, nil
	}
	if s.ended {
		return llm.Chunk{}, io.EOF
	}
	s.ended = true
	s.usage.TotalTokens = s.usage.InputTokens + s.usage.OutputTokens
	return llm.Chunk{Usage: &s.usage, FinishReason: s.finish}, nil
}

// Close stops pacing; later calls to Next return llm.ErrClosed.
func (s *stream) Close() error {
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	return nil
}

// pace waits until the next emission is due. Emissions keep a fixed
// schedule (first at once, then one per delay) so per-token overhead does
// not stretch the pace; a consumer that fell more than one delay behind
// restarts the schedule instead of receiving a burst.
func (s *stream) pace() error {
	if s.delay <= 0 {
		return nil
	}
	now := time.Now()
	if s.due.IsZero() {
		s.due = now.Add(s.delay)
		return nil
	}
	wait := s.due.Sub(now)
	s.due = s.due.Add(s.delay)
	if wait <= 0 {
		if -wait > s.delay {
			s.due = now.Add(s.delay)
		}
		return nil
	}
	if s.timer == nil {
		s.timer = time.NewTimer(wait)
	} else {
		s.timer.Reset(wait)
	}
	select {
	case <-s.ctx.Done():
		return s.ctx.Err()
	case <-s.timer.C:
		return nil
	}
}

// token returns the next text token without allocating: a slice of the
// reply, or of the generator's current batch.
func (s *stream) token() (string, bool) {
	if s.gen.n > 0 {
		return s.gen.token()
	}
	if s.pos >= len(s.text) {
		return "", false
	}
	end := len(s.text)
	switch s.split {
	case splitWords:
		end = wordEnd(s.text, s.pos)
	case splitChars:
		_, size := utf8.DecodeRuneInString(s.text[s.pos:])
		end = s.pos + size
	}
	tok := s.text[s.pos:end]
	s.pos = end
	return tok, true
}

// wordEnd returns the end of the token starting at from: leading
// whitespace, one word, and — for the last word — the trailing whitespace.
func wordEnd(s string, from int) int {
	i := skip(s, from, true)
	i = skip(s, i, false)
	if skip(s, i, true) == len(s) {
		return len(s)
	}
	return i
}

// skip advances over whitespace (space=true) or non-whitespace from i.
// ASCII, nearly all of the text, is looked up in asciiSpace.
func skip(s string, i int, space bool) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiSpace[c] != space {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) != space {
			return i
		}
		i += size
	}
	return i
}

// asciiSpace marks the ASCII characters unicode.IsSpace accepts.
var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\n': true, '\r': true, '\v': true, '\f': true}

// countWords counts whitespace-separated words: the scripted provider's
// deterministic token measure.
func countWords(s string) int64 {
	var n int64
	for i := skip(s, 0, true); i < len(s); i = skip(s, i, true) {
		n++
		i = skip(s, i, false)
	}
	return n
}

// generator produces "tok1", " tok2", … " tokN". It formats tokens in
// batches into one string and hands out slices of it, so streaming costs
// one allocation per batch rather than per token.
type generator struct {
	prefix, suffix, sep string
	n                   int // tokens to produce
	i                   int // tokens formatted so far

	batch string
	ends  []int // end offset of each token in batch
	at    int   // next token in batch
	buf   []byte
}

const batchSize = 256

func (g *generator) token() (string, bool) {
	if g.at == len(g.ends) {
		if g.i >= g.n {
			return "", false
		}
		g.fill()
	}
	start := 0
	if g.at > 0 {
		start = g.ends[g.at-1]
	}
	g.at++
	return g.batch[start:g.ends[g.at-1]], true
}

func (g *generator) fill() {
	g.buf, g.ends, g.at = g.buf[:0], g.ends[:0], 0
	for k := 0; k < batchSize && g.i < g.n; k++ {
		g.i++
		if g.i > 1 {
			g.buf = append(g.buf, g.sep...)
		}
		g.buf = append(g.buf, g.prefix...)
		g.buf = strconv.AppendInt(g.buf, int64(g.i), 10)
		g.buf = append(g.buf, g.suffix...)
		g.ends = append(g.ends, len(g.buf))
	}
	g.batch = string(g.buf)
}
