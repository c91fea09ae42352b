package scripted_test

import (
	"context"
	"strings"
	"testing"

	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

// compactionRequest is a summarisation request as the loop engine makes
// it.
func compactionRequest(body string) llm.Request {
	return llm.Request{
		Messages: []model.Message{model.NewText(model.RoleSystem, "You compact the history."),
			model.NewText(model.RoleUser, "Summarise the conversation below.\n\nConversation:\n"+body)},
		Metadata: map[string]string{llm.MetadataPurpose: llm.PurposeCompaction},
	}
}

// TestCompactionDigest: without a compaction rule, a summarisation request
// is answered by the built-in digest — deterministic, bounded, and never
// by the ordinary rules (the echo rule would repeat the whole request).
func TestCompactionDigest(t *testing.T) {
	p := newProvider(t, echoYAML)
	body := "[user] what is the capital of France, and why does it matter so much\n[assistant calls lookup] {\"q\":\"France\"}\n[result of lookup] Paris\n"
	var texts []string
	for range 2 {
		s, err := p.Stream(context.Background(), compactionRequest(body))
		if err != nil {
			t.Fatal(err)
		}
		toks, _ := drain(t, s)
		texts = append(texts, strings.Join(toks, ""))
	}
	want := "Digest of 3 lines: [user] what is the capital of …; [assistant calls lookup] {\"q\":\"France\"}; [result of lookup] Paris"
	if texts[0] != want || texts[1] != want {
		t.Fatalf("digest %q, %q\nwant %q", texts[0], texts[1], want)
	}
	s, err := p.Stream(context.Background(), compactionRequest(strings.Repeat("[user] a b c d e f g h\n", 100)))
	if err != nil {
		t.Fatal(err)
	}
	if toks, _ := drain(t, s); len(strings.Join(toks, "")) > 400 { // 12 lines of 6 words
		t.Fatalf("digest of 100 lines is %d bytes: not bounded", len(strings.Join(toks, "")))
	}
}

// TestCompactionRule: a rule with purpose: compaction answers
// summarisation requests, and only those.
func TestCompactionRule(t *testing.T) {
	p := newProvider(t, `
rules:
  - purpose: compaction
    reply: 'summary: {{len .Text}} bytes'
  - reply: 'echo {{.Text}}'
`)
	s, err := p.Stream(context.Background(), compactionRequest("[user] hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if toks, _ := drain(t, s); !strings.HasPrefix(strings.Join(toks, ""), "summary: ") {
		t.Fatalf("compaction answered %q", strings.Join(toks, ""))
	}
	s, err = p.Stream(context.Background(), llm.Request{Messages: user("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if toks, _ := drain(t, s); strings.Join(toks, "") != "echo hello" {
		t.Fatalf("ordinary turn answered %q", strings.Join(toks, ""))
	}
}

// TestSummarisedTurnsKeepCallIDsUnique: a summary standing for assistant
// turns counts them, so call ids do not repeat after a compaction.
func TestSummarisedTurnsKeepCallIDsUnique(t *testing.T) {
	p := newProvider(t, echoYAML)
	summary := model.NewText(model.RoleSystem, "Summary of the earlier conversation")
	summary.Metadata = map[string]any{llm.MetadataSummarisedTurns: 5}
	s, err := p.Stream(context.Background(), llm.Request{Messages: append([]model.Message{summary}, user("what time is it?")...)})
	if err != nil {
		t.Fatal(err)
	}
	_, chunks := drain(t, s)
	var ids []string
	for _, c := range chunks {
		for _, d := range c.ToolCalls {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) != 1 || ids[0] != "call_5_0" {
		t.Fatalf("call ids %v, want [call_5_0]", ids)
	}
}

func TestUnknownPurpose(t *testing.T) {
	_, err := scripted.New(scripted.Config{Rules: []scripted.Rule{{Purpose: "summary", Reply: "x"}}})
	if err == nil || !strings.Contains(err.Error(), `rules[0].purpose: unknown purpose "summary"`) {
		t.Fatalf("New: %v", err)
	}
}
