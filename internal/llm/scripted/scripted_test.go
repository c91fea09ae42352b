package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

// echoYAML is the configuration the demo echo agent relies on.
const echoYAML = `
rules:
  - name: paced
    match: '^stream (\d+) every (\d+)ms$'
    count: {number: '{{index .Groups 1}}'}
    delay: '{{index .Groups 2}}ms'
  - name: burst
    match: '^stream (\d+)$'
    count: {number: '{{index .Groups 1}}'}
  - name: clock
    prefix: 'what time'
    tool_calls:
      - name: clock
        arguments: {tz: UTC}
  - name: calc
    match: '^calc (?P<expr>.+)$'
    reply: 'computing'
    tool_calls:
      - name: calculator
        arguments: '{"expr": {{json .Named.expr}}}'
  - name: after-clock
    after_tool: clock
    reply: 'It is {{.ToolResult}}.'
  - name: after-any
    after_tool: '*'
    reply: '{{.Tool}} said {{.ToolResult}}'
  - name: echo
    reply: '{{.Text}}'
`

func newProvider(t testing.TB, src string) *scripted.Provider {
	t.Helper()
	var cfg scripted.Config
	if err := yaml.UnmarshalStrict([]byte(src), &cfg); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	p, err := scripted.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func user(text string) []model.Message { return []model.Message{model.NewText(model.RoleUser, text)} }

// drain returns the text of every chunk plus the collected turn.
func drain(t *testing.T, s llm.Stream) (tokens []string, chunks []llm.Chunk) {
	t.Helper()
	defer s.Close()
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			return tokens, chunks
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if c.Text != "" {
			tokens = append(tokens, c.Text)
		}
		chunks = append(chunks, c)
	}
}

func TestTextReplies(t *testing.T) {
	p := newProvider(t, echoYAML)
	tests := []struct {
		name   string
		text   string
		tokens []string
		usage  model.TokenUsage
	}{
		{"echo words", "hello  big\tworld ", []string{"hello", "  big", "\tworld"},
			model.TokenUsage{InputTokens: 3, OutputTokens: 3, TotalTokens: 6}},
		{"echo unicode", "héllo\u00a0wörld", []string{"héllo", "\u00a0wörld"},
			model.TokenUsage{InputTokens: 2, OutputTokens: 2, TotalTokens: 4}},
		{"stream N", "stream 3", []string{"tok1", " tok2", " tok3"},
			model.TokenUsage{InputTokens: 2, OutputTokens: 3, TotalTokens: 5}},
		{"stream N every D", "stream 2 every 1ms", []string{"tok1", " tok2"},
			model.TokenUsage{InputTokens: 4, OutputTokens: 2, TotalTokens: 6}},
		{"stream zero", "stream 0", nil,
			model.TokenUsage{InputTokens: 2, OutputTokens: 0, TotalTokens: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := p.Stream(context.Background(), llm.Request{Messages: user(tc.text)})
			if err != nil {
				t.Fatal(err)
			}
			tokens, chunks := drain(t, s)
			if strings.Join(tokens, "|") != strings.Join(tc.tokens, "|") {
				t.Errorf("tokens = %q, want %q", tokens, tc.tokens)
			}
			last := chunks[len(chunks)-1]
			if last.Usage == nil || *last.Usage != tc.usage || last.FinishReason != llm.FinishStop {
				t.Errorf("last chunk = %+v (usage %+v), want usage %+v and stop", last, last.Usage, tc.usage)
			}
		})
	}
}

func TestSplitModes(t *testing.T) {
	tests := []struct{ split, want string }{
		{"chars", "a|b| |é"},
		{"none", "ab é"},
		{"words", "ab| é"},
	}
	for _, tc := range tests {
		t.Run(tc.split, func(t *testing.T) {
			p := newProvider(t, "rules: [{reply: 'ab é', split: "+tc.split+"}]")
			s, err := p.Stream(context.Background(), llm.Request{Messages: user("x")})
			if err != nil {
				t.Fatal(err)
			}
			tokens, _ := drain(t, s)
			if got := strings.Join(tokens, "|"); got != tc.want {
				t.Errorf("tokens = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestToolRoundTrip(t *testing.T) {
	p := newProvider(t, echoYAML)
	conv := user("what time is it?")

	msg, usage, finish, err := llm.Collect(mustStream(t, p, conv))
	if err != nil {
		t.Fatal(err)
	}
	calls := msg.ToolCalls()
	if finish != llm.FinishToolCalls || len(calls) != 1 || calls[0].Name != "clock" ||
		calls[0].ID != "call_0_0" || string(calls[0].Arguments) != `{"tz":"UTC"}` {
		t.Fatalf("turn 1 = %+v, finish %q", calls, finish)
	}
	if usage.OutputTokens != 1 {
		t.Errorf("usage = %+v, want 1 output token for the call", usage)
	}

	// The result carries no tool name: the provider finds it by call id.
	conv = append(conv, msg, model.Message{Role: model.RoleTool, Parts: []model.Part{
		model.ToolResultPart(model.ToolResult{ToolCallID: "call_0_0", Content: "12:00"}),
	}})
	msg, _, finish, err = llm.Collect(mustStream(t, p, conv))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Text() != "It is 12:00." || finish != llm.FinishStop {
		t.Errorf("turn 2 = %q (%s), want %q", msg.Text(), finish, "It is 12:00.")
	}

	// Any other tool result falls through to the after_tool "*" rule.
	conv[len(conv)-1].Parts[0].ToolResult.Name = "other"
	msg, _, _, err = llm.Collect(mustStream(t, p, conv))
	if err != nil || msg.Text() != "other said 12:00" {
		t.Errorf("after-any = %q, %v", msg.Text(), err)
	}
}

func TestTemplatedArguments(t *testing.T) {
	p := newProvider(t, echoYAML)
	msg, _, _, err := llm.Collect(mustStream(t, p, user(`calc 1 + "2"`)))
	if err != nil {
		t.Fatal(err)
	}
	calls := msg.ToolCalls()
	var args struct{ Expr string }
	if len(calls) != 1 || json.Unmarshal(calls[0].Arguments, &args) != nil || args.Expr != `1 + "2"` {
		t.Fatalf("calls = %+v", calls)
	}
	if msg.Text() != "computing" {
		t.Errorf("text = %q", msg.Text())
	}
}

func mustStream(t *testing.T, p llm.Provider, msgs []model.Message) llm.Stream {
	t.Helper()
	s, err := p.Stream(context.Background(), llm.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name, config, text, want string
	}{
		{"no rule", "rules: [{prefix: hi, reply: x}]", "bye", `no rule matches the message "bye"`},
		{"group out of range", "rules: [{match: 'a', reply: '{{index .Groups 3}}'}]", "a", "rules[0].reply"},
		{"count too large", "rules: [{match: '(\\d+)', count: {number: '{{index .Groups 1}}', max: 10}}]", "11",
			"rules[0].count.number: 11 exceeds the maximum of 10"},
		{"count not a number", "rules: [{count: {number: '{{.Text}}'}}]", "many", `rules[0].count.number: "many" is not`},
		{"delay too long", "rules: [{reply: x, delay: '{{.Text}}'}]", "2h", "rules[0].delay: 2h0m0s is outside"},
		{"arguments not JSON", "rules: [{tool_calls: [{name: t, arguments: '{{.Text}}'}]}]", "{", "rules[0].tool_calls[0].arguments: rendered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, tc.config)
			_, err := p.Stream(context.Background(), llm.Request{Messages: user(tc.text)})
			if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want Validation containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ config, want string }{
		{"rules: [{reply: ok}, {match: '(', reply: x}]", "rules[1].match: "},
		{"rules: [{}]", "rules[0]: set reply, count or tool_calls"},
		{"rules: [{reply: x, count: {number: '1'}}]", "rules[0]: reply and count exclude each other"},
		{"rules: [{reply: '{{.Text'}]", "rules[0].reply: "},
		{"rules: [{reply: x, split: lines}]", `rules[0].split: unknown mode "lines"`},
		{"rules: [{count: {number: '1', format: 'tok%s'}}]", "rules[0].count.format: "},
		{"rules: [{count: {number: 'x'}}]", `rules[0].count.number: "x" is not a non-negative integer`},
		{"rules: [{count: {}}]", "rules[0].count.number: required"},
		{"rules: [{reply: x, delay: soon}]", `rules[0].delay: "soon" is not a duration`},
		{"rules: [{tool_calls: [{arguments: {}}]}]", "rules[0].tool_calls[0].name: required"},
		{"rules: [{tool_calls: [{name: t, arguments: [1]}]}]", "rules[0].tool_calls[0].arguments: want a JSON object"},
		{"rules: [{tool_calls: [{name: t, arguments: 'nope'}]}]", `rules[0].tool_calls[0].arguments: "nope" is not valid JSON`},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			var cfg scripted.Config
			if err := yaml.UnmarshalStrict([]byte(tc.config), &cfg); err != nil {
				t.Fatalf("yaml: %v", err)
			}
			_, err := scripted.New(cfg)
			if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want Validation containing %q", err, tc.want)
			}
		})
	}
}

func TestCancelStopsPacedStream(t *testing.T) {
	p := newProvider(t, echoYAML)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := p.Stream(ctx, llm.Request{Messages: user("stream 5 every 60000ms")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, err := s.Next(); err != nil || c.Text != "tok1" {
		t.Fatalf("first token = %q, %v; want it at once", c.Text, err)
	}
	result := make(chan error, 1)
	go func() {
		_, err := s.Next() // blocks for a minute unless cancelled
		result <- err
	}()
	cancel()
	select {
	case err := <-result:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Next after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return after cancel")
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	p := newProvider(t, echoYAML)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, llm.Request{Messages: user("stream 1000")})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", err)
	}
	if _, err := p.Stream(ctx, llm.Request{Messages: user("x")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Stream on a cancelled context = %v", err)
	}
}

func TestClosedStream(t *testing.T) {
	p := newProvider(t, echoYAML)
	s := mustStream(t, p, user("a b"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("Next after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestLongCountCrossesBatches(t *testing.T) {
	p := newProvider(t, echoYAML)
	msg, usage, _, err := llm.Collect(mustStream(t, p, user("stream 1000")))
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(msg.Text())
	if len(words) != 1000 || words[0] != "tok1" || words[256] != "tok257" || words[999] != "tok1000" {
		t.Errorf("got %d words, first %q, last %q", len(words), words[0], words[len(words)-1])
	}
	if usage.OutputTokens != 1000 {
		t.Errorf("usage = %+v", usage)
	}
}

func TestMetadataInTemplates(t *testing.T) {
	p := newProvider(t, "rules: [{reply: 'I am {{.Metadata.agent}}, turn {{.Turn}}'}]")
	s, err := p.Stream(context.Background(), llm.Request{
		Messages: []model.Message{
			model.NewText(model.RoleUser, "hi"), model.NewText(model.RoleAssistant, "hello"),
			model.NewText(model.RoleUser, "who?"),
		},
		Metadata: map[string]string{"agent": "echo"},
	})
	if err != nil {
		t.Fatal(err)
	}
	msg, _, _, err := llm.Collect(s)
	if err != nil || msg.Text() != "I am echo, turn 1" {
		t.Errorf("text = %q, %v", msg.Text(), err)
	}
}
