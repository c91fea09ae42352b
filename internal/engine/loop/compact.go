package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// Compaction: when a request would pass the limit even with old tool
// results elided, the oldest exchanges of the recent history are
// summarised by the model, together with the summary before them, into a
// new summary message appended to the main channel (see context.go). It
// cuts only between exchanges, oldest first, spares the latest exchange,
// and folds away enough that the rest takes at most half the limit, so
// that a long conversation compacts now and then rather than every turn.
// Each compaction publishes a context.compaction event.

// compactionPrompt instructs the model that summarises.
const compactionPrompt = "You compact the history of a conversation between a user and an AI agent that uses tools. " +
	"Write a summary that lets the agent carry on without the original messages: keep the user's goals and constraints, " +
	"facts, names, numbers, decisions, the results of tool calls that matter and any open questions; leave out pleasantries. " +
	"Write the summary only, in plain prose, in at most %d words."

// CompactionRequestPrefix starts the user message of every summarisation
// request, so that a scripted rule can match it (prefix:).
const CompactionRequestPrefix = "Summarise the conversation below."

// compactionEvent is the payload of a context.compaction event.
type compactionEvent struct {
	Iteration int `json:"iteration"`
	// TokensBefore is the size of the request without this compaction
	// (nothing elided), TokensAfter that of the request sent; Estimated
	// says both are estimates, no provider usage having calibrated them.
	TokensBefore int  `json:"tokens_before"`
	TokensAfter  int  `json:"tokens_after"`
	Estimated    bool `json:"estimated"`
	// MessagesSummarised were folded into the summary this time;
	// MessagesKept stay as they are.
	MessagesSummarised int `json:"messages_summarised"`
	MessagesKept       int `json:"messages_kept"`
	ToolResultsElided  int `json:"tool_results_elided,omitempty"`
	ContextWindow      int `json:"context_window"`
	ThresholdTokens    int `json:"threshold_tokens"`
	// The summarisation call's model and usage.
	Model        string `json:"model,omitempty"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
}

// contextMessages returns the history of iteration n's request — the
// compacted and recent regions, with eviction applied — compacting first
// when the request would pass the limit.
func (x *execution) contextMessages(n int) ([]model.Message, error) {
	hist := x.board.ChannelView(engine.MainChannel)
	c := counter{fixed: x.e.fixedTokens(), ratio: x.cm.ratio}
	limit := x.e.limit()
	summary, mark, recent := regions(hist)
	force := x.cm.force
	x.cm.force = false
	if !force && summary == nil && c.count(recent) <= limit {
		x.cm.sentEstimate = c.fixed + llm.EstimateMessages(recent)
		return recent, nil // the common case: the history as it is
	}
	view := x.view(c, summary, mark, recent)
	view.elideResults(limit)
	if force || view.tokens() > limit {
		cut := compactionCut(c, recent, limit/2-x.e.summaryTokens())
		if cut > 0 {
			before := c.count(append(summaryMessage(summary, mark), recent...))
			if err := x.compact(n, summary, mark, recent[:cut], len(recent)-cut, before); err != nil {
				return nil, err
			}
			summary, mark, recent = regions(x.board.ChannelView(engine.MainChannel))
			view = x.view(c, summary, mark, recent)
			x.cm.last.ToolResultsElided = view.elideResults(limit)
			x.publishCompaction(view)
		}
	}
	view.clip(limit)
	x.cm.sentEstimate = c.fixed + view.est
	return view.msgs, nil
}

// view copies the compacted and recent regions into a sized view.
func (x *execution) view(c counter, summary *model.Message, mark compactionMark, recent []model.Message) *sized {
	msgs := summaryMessage(summary, mark)
	msgs = append(msgs, recent...)
	return newSized(c, msgs)
}

// compactionCut is how many messages at the head of recent to summarise:
// the shortest run of whole exchanges after which the rest takes at most
// target tokens, never the latest exchange; 0 when recent has a single
// exchange.
func compactionCut(c counter, recent []model.Message, target int) int {
	starts := unitStarts(recent)
	if len(starts) < 2 {
		return 0
	}
	rest := llm.EstimateMessages(recent)
	for k := 1; k < len(starts); k++ {
		rest -= llm.EstimateMessages(recent[starts[k-1]:starts[k]])
		if c.scale(c.fixed+rest) <= target {
			return starts[k]
		}
	}
	return starts[len(starts)-1]
}

// summaryTokens caps a summary: an eighth of the limit, at most 1024.
func (e *Engine) summaryTokens() int {
	return max(32, min(e.limit()/8, 1024))
}

// compact summarises the previous summary and folded into a new summary
// message on the main channel, which keeps the kept messages before it.
func (x *execution) compact(n int, prev *model.Message, mark compactionMark, folded []model.Message, kept, before int) error {
	prevText := ""
	if prev != nil {
		prevText = prev.Text()
	}
	text, usage, err := x.summarise(prevText, folded)
	if !usage.IsZero() {
		if budget := x.reportUsage(n, usage); budget != nil && err == nil {
			err = budget
		}
	}
	if err != nil {
		if stop := x.stopped(); stop != nil {
			return stop
		}
		return fmt.Errorf("loop agent %q: context compaction before model turn %d: %w", x.actor, n, err)
	}
	turns := 0
	for _, m := range folded {
		if m.Role == model.RoleAssistant {
			turns++
		}
	}
	next := compactionMark{Kept: kept, Messages: mark.Messages + len(folded), Turns: mark.Turns + turns}
	msg := model.NewText(model.RoleSystem, text)
	msg.Metadata = map[string]any{MetadataCompaction: next}
	x.appendMessage(msg)
	x.cm.last = &compactionEvent{
		Iteration: n, TokensBefore: before, Estimated: x.cm.ratio == 0,
		MessagesSummarised: len(folded), MessagesKept: kept,
		ContextWindow: x.e.cfg.ContextWindow, ThresholdTokens: x.e.limit(),
		Model: x.e.cfg.Model, InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens,
	}
	return nil
}

// publishCompaction publishes the compaction just made, with the size of
// the request it leaves.
func (x *execution) publishCompaction(view *sized) {
	ev := x.cm.last
	if ev == nil {
		return
	}
	ev.TokensAfter = view.tokens()
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	x.publish(engine.Compaction{Actor: x.actor, Payload: b})
}

// summarise asks the model for a summary of prev (the summary so far) and
// msgs, capped at summaryTokens.
func (x *execution) summarise(prev string, msgs []model.Message) (string, model.TokenUsage, error) {
	capTokens := x.e.summaryTokens()
	var ctx context.Context = &x.work
	if d := x.e.cfg.TurnTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	req := llm.Request{
		Model: x.e.cfg.Model,
		Messages: []model.Message{
			model.NewText(model.RoleSystem, fmt.Sprintf(compactionPrompt, capTokens*3/4)),
			model.NewText(model.RoleUser, x.e.compactionInput(prev, msgs, capTokens)),
		},
		MaxTokens: capTokens,
		Metadata: map[string]string{engine.AttrRunID: x.run.ID, engine.AttrAgentID: x.actor,
			llm.MetadataPurpose: llm.PurposeCompaction},
	}
	s, err := x.e.cfg.Provider.Stream(ctx, req)
	if err != nil {
		return "", model.TokenUsage{}, x.turnTimedOut(ctx, err)
	}
	defer s.Close()
	var acc llm.Accumulator
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", acc.Usage(), x.turnTimedOut(ctx, err)
		}
		acc.Add(c)
	}
	text := strings.TrimSpace(acc.Message().Text())
	if text == "" {
		return "", acc.Usage(), fmt.Errorf("the model answered the summarisation request with no text")
	}
	if limit := capTokens * llm.BytesPerToken; len(text) > limit {
		text = clipTo(text, limit)
	}
	return text, acc.Usage(), nil
}

// compactionInput renders the summarisation request: the summary so far
// and the messages to fold, one line each, clipped so the request fits
// the window beside the summary it asks for.
func (e *Engine) compactionInput(prev string, msgs []model.Message, capTokens int) string {
	budget := (e.cfg.ContextWindow - capTokens - 256) * llm.BytesPerToken * 3 / 4
	perLine := max(256, budget/max(1, len(msgs)))
	var b strings.Builder
	b.WriteString(CompactionRequestPrefix)
	if prev != "" {
		b.WriteString("\n\nSummary so far:\n")
		b.WriteString(clipTo(prev, perLine*4))
	}
	b.WriteString("\n\nConversation:\n")
	for _, m := range msgs {
		for _, line := range transcriptLines(m) {
			b.WriteString(clipTo(line, perLine))
			b.WriteByte('\n')
		}
	}
	return clipTo(b.String(), max(budget, 1024))
}

// transcriptLines renders one message for the summariser.
func transcriptLines(m model.Message) []string {
	var out []string
	for _, p := range m.Parts {
		switch {
		case p.ToolCall != nil:
			out = append(out, "["+string(m.Role)+" calls "+p.ToolCall.Name+"] "+string(p.ToolCall.Arguments))
		case p.ToolResult != nil:
			name := p.ToolResult.Name
			if name == "" {
				name = m.Name
			}
			out = append(out, "[result of "+name+"] "+p.ToolResult.Content)
		case p.Text != "":
			out = append(out, "["+string(m.Role)+"] "+p.Text)
		case len(p.Data) > 0:
			out = append(out, "["+string(m.Role)+" data] "+string(p.Data))
		}
	}
	return out
}

// clipTo shortens s to about n bytes (at least 32), keeping its head and
// tail around a marker.
func clipTo(s string, n int) string {
	keep := max(16, (n-len(clippedMarker))/2)
	if len(s) <= n || 2*keep+len(clippedMarker) >= len(s) {
		return s
	}
	head, tail := keep, len(s)-keep
	for head > 0 && !runeStart(s[head]) {
		head--
	}
	for tail < len(s) && !runeStart(s[tail]) {
		tail++
	}
	return s[:head] + clippedMarker + s[tail:]
}
