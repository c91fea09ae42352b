package loop_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

const compactPrompt = "You are a careful assistant."

// randomHistory is a random conversation of n exchanges: user texts,
// assistant texts, and assistant turns calling one to four tools
// (parallel calls) answered by their results, with texts from a few
// bytes to several kilobytes. Every message has an id.
func randomHistory(r *rand.Rand, prefix string, n int) []model.Message {
	var out []model.Message
	id := 0
	next := func(m model.Message) {
		id++
		m.ID = fmt.Sprintf("%s%03d", prefix, id)
		out = append(out, m)
	}
	text := func() string {
		size := []int{8, 40, 200, 1200, 6000}[r.IntN(5)]
		return strings.Repeat("lorem ipsum ", size/12+1)[:size]
	}
	for range n {
		switch r.IntN(4) {
		case 0:
			next(model.NewText(model.RoleUser, text()))
		case 1:
			next(model.NewText(model.RoleAssistant, text()))
		default:
			calls := 1 + r.IntN(4)
			asst := model.Message{Role: model.RoleAssistant}
			if r.IntN(2) == 0 {
				asst.Parts = append(asst.Parts, model.TextPart(text()))
			}
			for c := range calls {
				asst.Parts = append(asst.Parts, model.ToolCallPart(model.ToolCall{
					ID: fmt.Sprintf("call-%d-%d", id, c), Name: "counter", Arguments: json.RawMessage(`{}`)}))
			}
			next(asst)
			for _, call := range asst.ToolCalls() {
				next(model.Message{Role: model.RoleTool, Name: call.Name, Parts: []model.Part{
					model.ToolResultPart(model.ToolResult{ToolCallID: call.ID, Name: call.Name, Content: text()})}})
			}
		}
	}
	return out
}

// checkRequest checks the properties every request must have: the system
// prompt first and intact, every tool call followed by its result and
// every result preceded by its call, the estimate within the limit, and
// the history a suffix of the board's (no summary included) cut between
// exchanges.
func checkRequest(t *testing.T, req llm.Request, board []model.Message, limit int) {
	t.Helper()
	msgs := req.Messages
	if len(msgs) == 0 || msgs[0].Role != model.RoleSystem || msgs[0].Text() != compactPrompt {
		t.Fatalf("the request does not start with the system prompt: %+v", msgs[:min(1, len(msgs))])
	}
	if est := llm.EstimateMessages(msgs) + llm.EstimateTools(req.Tools); est > limit {
		t.Errorf("request of about %d tokens, over the limit of %d", est, limit)
	}
	open := map[string]bool{}
	for i, m := range msgs {
		if m.Role != model.RoleTool && len(open) > 0 {
			t.Fatalf("message %d (%s) comes before the results of calls %v", i, m.Role, open)
		}
		for _, c := range m.ToolCalls() {
			open[c.ID] = true
		}
		for _, p := range m.Parts {
			if p.ToolResult == nil {
				continue
			}
			if !open[p.ToolResult.ToolCallID] {
				t.Fatalf("message %d: result of call %q without its call before it", i, p.ToolResult.ToolCallID)
			}
			delete(open, p.ToolResult.ToolCallID)
		}
	}
	if len(open) > 0 {
		t.Fatalf("calls %v without results", open)
	}
	var sent []string
	for _, m := range msgs[1:] {
		if m.ID != "" {
			sent = append(sent, m.ID)
		}
	}
	var kept []string
	for _, m := range board {
		if _, summary := m.Metadata[loop.MetadataCompaction]; !summary && m.ID != "" {
			kept = append(kept, m.ID)
		}
	}
	if len(sent) == 0 || len(sent) > len(kept) || strings.Join(kept[len(kept)-len(sent):], ",") != strings.Join(sent, ",") {
		t.Fatalf("the request's history %v is not the latest messages of the board %v", sent, kept)
	}
	if first := msgs[1]; first.Role == model.RoleTool {
		t.Fatalf("the request's history starts with a tool result")
	}
}

// TestCompactionProperties runs random conversations through a small
// window: every request keeps the system prompt, never separates a call
// from its result, fits the threshold, and summarises oldest first. Each
// conversation is run twice, so the second run compacts a history that
// already has a summary.
func TestCompactionProperties(t *testing.T) {
	var compacted, recompacted int
	defer func() {
		// The generator must exercise what the test is about.
		t.Logf("%d runs compacted, %d of them on top of an earlier summary", compacted, recompacted)
		if compacted < 100 || recompacted < 20 {
			t.Errorf("only %d runs compacted, %d twice: the generator no longer exercises compaction", compacted, recompacted)
		}
	}()
	for seed := range uint64(150) {
		r := rand.New(rand.NewPCG(seed, 19))
		window := 2000 + r.IntN(6000)
		threshold := 0.5 + r.Float64()*0.5
		rec := &recordingProvider{inner: newScripted(t, scripted.Rule{Prefix: "go on", Reply: "done"})}
		eng := newEngine(t, loop.Config{Provider: rec, SystemPrompt: compactPrompt,
			ToolNames: []string{"counter"}, ContextWindow: window, CompactThreshold: threshold})
		limit := int(float64(window) * threshold)
		board := engine.NewBoard()
		board.SetChannel(engine.MainChannel, randomHistory(r, "m", 5+r.IntN(40)))
		for run := range 2 {
			if run == 1 { // more conversation on top of the first summary
				for _, m := range randomHistory(r, "n", 5+r.IntN(20)) {
					board.AppendChannelMessage(engine.MainChannel, m)
				}
			}
			user := model.NewText(model.RoleUser, "go on")
			user.ID = fmt.Sprintf("u%d", run)
			board.AppendChannelMessage(engine.MainChannel, user)
			host := enginetest.NewRecordingHost()
			if _, err := execute(t, eng, engine.Run{ID: fmt.Sprintf("run-%d-%d", seed, run)}, board, host); err != nil {
				t.Fatalf("seed %d run %d: %v", seed, run, err)
			}
			reqs := rec.requests()
			last := reqs[len(reqs)-1]
			if last.Metadata[llm.MetadataPurpose] != "" {
				t.Fatalf("seed %d: the last request was a %s", seed, last.Metadata[llm.MetadataPurpose])
			}
			t.Run(fmt.Sprintf("seed%d/run%d", seed, run), func(t *testing.T) {
				msgs := board.Channel(engine.MainChannel)
				checkRequest(t, last, msgs[:len(msgs)-1], limit) // the board before the answer
				n := checkSummaries(t, board.Channel(engine.MainChannel), host)
				if n > 0 {
					compacted++
				}
				if n > 0 && run == 1 && strings.Contains(rec.requests()[len(reqs)-2].Messages[1].Text(), "Summary so far:") {
					recompacted++
				}
			})
		}
	}
}

// checkSummaries checks that each compaction event's summary is on the
// board and that the event's numbers agree with it; it returns the number
// of events.
func checkSummaries(t *testing.T, board []model.Message, host *enginetest.RecordingHost) int {
	t.Helper()
	var events []map[string]any
	for _, ev := range host.Events() {
		if c, ok := ev.(engine.Compaction); ok {
			var p map[string]any
			if err := json.Unmarshal(c.Payload, &p); err != nil {
				t.Fatal(err)
			}
			events = append(events, p)
		}
	}
	summaries := 0
	for _, m := range board {
		if _, ok := m.Metadata[loop.MetadataCompaction]; ok {
			summaries++
		}
	}
	if len(events) > summaries {
		t.Fatalf("%d compaction events, %d summaries on the board", len(events), summaries)
	}
	for _, p := range events {
		if p["messages_summarised"].(float64) < 1 || p["tokens_after"].(float64) >= p["tokens_before"].(float64) {
			t.Errorf("compaction event %v: nothing summarised, or no tokens saved", p)
		}
	}
	return len(events)
}

// calcTurns is a board of n calculator exchanges (what is i+i? — the
// answer), each with a long question, ending with a new question.
func calcTurns(n int) *engine.Board {
	b := engine.NewBoard()
	pad := strings.Repeat("please ", 60)
	for i := range n {
		u := model.NewText(model.RoleUser, pad+"remember this")
		u.ID = fmt.Sprintf("u%d", i)
		a := model.NewText(model.RoleAssistant, "noted "+pad)
		a.ID = fmt.Sprintf("a%d", i)
		b.AppendChannelMessage(engine.MainChannel, u)
		b.AppendChannelMessage(engine.MainChannel, a)
	}
	q := model.NewText(model.RoleUser, "what is 6*7?")
	q.ID = "question"
	b.AppendChannelMessage(engine.MainChannel, q)
	return b
}

// TestCompactionTriggerAndEvent: a history over the threshold is
// summarised before the model turn, once; the event says what happened;
// the tool loop then completes on the compacted history; the summary is
// on the board and in the checkpoints; a resume from the last checkpoint
// does not summarise again.
func TestCompactionTriggerAndEvent(t *testing.T) {
	rec := &recordingProvider{inner: newScripted(t, calcRules()...)}
	eng := newEngine(t, loop.Config{Provider: rec, SystemPrompt: compactPrompt, ContextWindow: 2000, CompactThreshold: 0.8})
	host := enginetest.NewRecordingHost()
	board := calcTurns(12) // about 12 × 2 × 110 tokens: well over 1600
	out, err := execute(t, eng, engine.Run{ID: "run-compact"}, board, host)
	if err != nil {
		t.Fatal(err)
	}
	msgs := out.Channel(engine.MainChannel)
	if got := msgs[len(msgs)-1].Text(); got != "The answer is 42." {
		t.Fatalf("final answer %q", got)
	}
	var compactions []engine.Compaction
	for _, ev := range host.Events() {
		if c, ok := ev.(engine.Compaction); ok && c.Actor == agentID {
			compactions = append(compactions, c)
		}
	}
	if len(compactions) != 1 {
		t.Fatalf("%d compaction events, want 1", len(compactions))
	}
	var p struct {
		Iteration          int  `json:"iteration"`
		TokensBefore       int  `json:"tokens_before"`
		TokensAfter        int  `json:"tokens_after"`
		MessagesSummarised int  `json:"messages_summarised"`
		MessagesKept       int  `json:"messages_kept"`
		ContextWindow      int  `json:"context_window"`
		ThresholdTokens    int  `json:"threshold_tokens"`
		Estimated          bool `json:"estimated"`
		InputTokens        int  `json:"input_tokens"`
	}
	if err := json.Unmarshal(compactions[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Iteration != 1 || p.TokensBefore <= 1600 || p.TokensAfter > 800 || p.MessagesSummarised == 0 ||
		p.MessagesSummarised+p.MessagesKept != 25 || p.ContextWindow != 2000 || p.ThresholdTokens != 1600 || !p.Estimated || p.InputTokens == 0 {
		t.Fatalf("compaction event %+v", p)
	}
	reqs := rec.requests()
	if len(reqs) != 3 || reqs[0].Metadata[llm.MetadataPurpose] != llm.PurposeCompaction ||
		!strings.HasPrefix(reqs[0].Messages[1].Text(), loop.CompactionRequestPrefix) {
		t.Fatalf("requests: want a summarisation then two turns, got %d", len(reqs))
	}
	// The turns see the summary right after the system prompt.
	for _, req := range reqs[1:] {
		if s := req.Messages[1]; s.Role != model.RoleSystem || !strings.Contains(s.Text(), "Summary of the earlier conversation") {
			t.Fatalf("second message of a turn: %+v", s)
		}
	}
	// The summary survives in the checkpoints: a resume continues without
	// summarising again.
	cps := host.Checkpoints()
	cp := cps[0] // after iteration 1: the calculator's result is in
	rec2 := &recordingProvider{inner: newScripted(t, calcRules()...)}
	eng2 := newEngine(t, loop.Config{Provider: rec2, SystemPrompt: compactPrompt, ContextWindow: 2000, CompactThreshold: 0.8})
	if _, err := execute(t, eng2, engine.Run{ID: "run-compact", ResumeFrom: &cp}, engine.NewBoard(), nil); err != nil {
		t.Fatal(err)
	}
	for _, req := range rec2.requests() {
		if req.Metadata[llm.MetadataPurpose] != "" {
			t.Fatal("the resumed attempt summarised again")
		}
	}
}

// TestCompactionNotTriggered: under the threshold the request is the
// history as it is, and no event is published.
func TestCompactionNotTriggered(t *testing.T) {
	rec := &recordingProvider{inner: newScripted(t, calcRules()...)}
	eng := newEngine(t, loop.Config{Provider: rec, SystemPrompt: compactPrompt})
	host := enginetest.NewRecordingHost()
	if _, err := execute(t, eng, engine.Run{ID: "run-small"}, calcTurns(12), host); err != nil {
		t.Fatal(err)
	}
	for _, ev := range host.Events() {
		if _, ok := ev.(engine.Compaction); ok {
			t.Fatalf("unexpected %s", enginetest.Describe(ev))
		}
	}
	if reqs := rec.requests(); len(reqs) != 2 || len(reqs[0].Messages) != 1+25 {
		t.Fatalf("requests %d, first with %d messages", len(reqs), len(reqs[0].Messages))
	}
}

// TestToolResultsElidedFirst: when eliding old tool results is enough,
// nothing is summarised: the results of the latest exchange stay whole.
func TestToolResultsElidedFirst(t *testing.T) {
	big := strings.Repeat("x", 4000) // about 1000 tokens each
	b := engine.NewBoard()
	for i := range 3 {
		call := model.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "counter", Arguments: json.RawMessage(`{}`)}
		b.AppendChannelMessage(engine.MainChannel, model.Message{ID: fmt.Sprintf("a%d", i), Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(call)}})
		b.AppendChannelMessage(engine.MainChannel, model.Message{ID: fmt.Sprintf("r%d", i), Role: model.RoleTool, Parts: []model.Part{
			model.ToolResultPart(model.ToolResult{ToolCallID: call.ID, Name: "counter", Content: big})}})
	}
	rec := &recordingProvider{inner: newScripted(t, scripted.Rule{AfterTool: "*", Reply: "done"})}
	eng := newEngine(t, loop.Config{Provider: rec, SystemPrompt: compactPrompt, ContextWindow: 3000, CompactThreshold: 0.8})
	host := enginetest.NewRecordingHost()
	if _, err := execute(t, eng, engine.Run{ID: "run-elide"}, b, host); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want the turn alone (no summarisation)", len(reqs))
	}
	msgs := reqs[0].Messages
	var contents []int
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.ToolResult != nil {
				contents = append(contents, len(p.ToolResult.Content))
			}
		}
	}
	if len(contents) != 3 || contents[0] >= 100 || contents[2] != len(big) {
		t.Fatalf("tool result sizes %v: want the oldest elided, the latest whole", contents)
	}
}

// TestContextConfigValidation: the settings are checked at New, naming
// the key.
func TestContextConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  loop.Config
		want string
	}{
		{loop.Config{ContextWindow: 100}, "context_window 100"},
		{loop.Config{CompactThreshold: 1.5}, "compact_threshold 1.5"},
		{loop.Config{ContextWindow: 300, SystemPrompt: strings.Repeat("long ", 400)}, "context_window 300: the system prompt and tools"},
	} {
		tc.cfg.Provider = newScripted(t, scripted.Rule{Reply: "x"})
		tc.cfg.Tools = registry(t, &counter{})
		_, err := loop.New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error with %q", tc.cfg.ContextWindow, err, tc.want)
		}
	}
}
