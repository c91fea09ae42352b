package loop_test

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// Execute may start an interrupt watcher per run; none may outlive it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const agentID = "calc-agent"

// calcRules drive a two-round calculator conversation: "what is X?" asks
// the calculator, its result is answered in words; "block" streams one
// token and then waits a minute for the next; "loop" calls the counter
// forever.
func calcRules() []scripted.Rule {
	return []scripted.Rule{
		{Match: `^what is (.+)\?$`, ToolCalls: []scripted.ToolCall{{
			Name:      tool.CalculatorName,
			Arguments: json.RawMessage(`"{\"expression\": {{json (index .Groups 1)}}}"`),
		}}},
		{AfterTool: tool.CalculatorName, Reply: "The answer is {{.ToolResult}}."},
		{Prefix: "block", Count: &scripted.Count{Number: "3"}, Delay: "1m"},
		{Prefix: "loop", ToolCalls: []scripted.ToolCall{{Name: "counter"}}},
		{Prefix: "loop", AfterTool: "counter", ToolCalls: []scripted.ToolCall{{Name: "counter"}}},
		{Prefix: "count once", ToolCalls: []scripted.ToolCall{{Name: "counter"}}},
		{Prefix: "count once", AfterTool: "*", Reply: "counted {{.ToolResult}}"},
		{Prefix: "say", Reply: "alpha beta gamma delta"},
	}
}

func newScripted(t testing.TB, rules ...scripted.Rule) *scripted.Provider {
	t.Helper()
	p, err := scripted.New(scripted.Config{Rules: rules})
	if err != nil {
		t.Fatalf("scripted.New: %v", err)
	}
	return p
}

// counter is a tool that counts its calls and remembers the idempotency
// keys it saw.
type counter struct {
	calls atomic.Int64
	mu    sync.Mutex
	keys  []string
}

func (c *counter) tool() tool.Tool {
	return tool.New(tool.Spec{Name: "counter", Description: "counts its calls"},
		func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			if call, ok := tool.CallFromContext(ctx); ok {
				c.mu.Lock()
				c.keys = append(c.keys, call.IdempotencyKey)
				c.mu.Unlock()
			}
			return tool.Text(strconv.FormatInt(c.calls.Add(1), 10)), nil
		})
}

func (c *counter) Keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

// registry holds the calculator, the clock and cnt's counter.
func registry(t testing.TB, cnt *counter, extra ...tool.Tool) *tool.Registry {
	t.Helper()
	var r tool.Registry
	if err := tool.RegisterBuiltins(&r, tool.BuiltinOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tl := range append([]tool.Tool{cnt.tool()}, extra...) {
		if err := r.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return &r
}

// newEngine builds an engine on cfg, defaulting the provider to the
// calculator script and the tools to calculator + counter.
func newEngine(t testing.TB, cfg loop.Config) *loop.Engine {
	t.Helper()
	if cfg.Provider == nil {
		cfg.Provider = newScripted(t, calcRules()...)
	}
	if cfg.Tools == nil {
		cfg.Tools = registry(t, &counter{})
	}
	if cfg.ToolNames == nil {
		cfg.ToolNames = []string{tool.CalculatorName, "counter"}
	}
	if cfg.AgentID == "" {
		cfg.AgentID = agentID
	}
	eng, err := loop.New(cfg)
	if err != nil {
		t.Fatalf("loop.New: %v", err)
	}
	return eng
}

// userBoard is a board whose main channel holds one user message.
func userBoard(text string) *engine.Board {
	b := engine.NewBoard()
	msg := model.NewText(model.RoleUser, text)
	msg.ID = "user-1"
	b.AppendChannelMessage(engine.MainChannel, msg)
	return b
}

func input(runID, text string) func() enginetest.Input {
	return func() enginetest.Input {
		return enginetest.Input{Run: engine.Run{ID: runID}, Board: userBoard(text)}
	}
}

// execute runs eng to its end on a recording host.
func execute(t testing.TB, eng engine.Engine, run engine.Run, board *engine.Board, host *enginetest.RecordingHost) (*engine.Board, error) {
	t.Helper()
	if host == nil {
		host = enginetest.NewRecordingHost()
	}
	return eng.Execute(t.Context(), run, host, board)
}

// waitFor waits for the first event matching match, failing after a
// deadline.
func waitFor(t testing.TB, h *enginetest.RecordingHost, what string, match func(engine.Event) bool) engine.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	env, err := h.WaitFor(ctx, match)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return env
}

// delta is a stream event of a run — a token, a tool call or a tool
// result — flattened for comparisons: Type says which.
type delta struct {
	Type                     string // token, tool_call, tool_result
	Actor, Content, ID, Name string
	ToolCallID               string
	IsError, Cancelled       bool
}

// deltas lists the run's stream events, in order.
func deltas(t testing.TB, evs []engine.Event) []delta {
	t.Helper()
	var out []delta
	for _, ev := range evs {
		if d, ok := deltaOf(ev); ok {
			out = append(out, d)
		}
	}
	return out
}

func deltaOf(ev engine.Event) (delta, bool) {
	switch e := ev.(type) {
	case engine.Token:
		return delta{Type: "token", Actor: e.Actor, Content: e.Text}, true
	case engine.ToolCall:
		return delta{Type: "tool_call", Actor: e.Actor, ID: e.ID, Name: e.Name}, true
	case engine.ToolResult:
		return delta{Type: "tool_result", Actor: e.Actor, ToolCallID: e.ToolCallID, Name: e.Name,
			Content: e.Content, IsError: e.IsError, Cancelled: e.Cancelled}, true
	}
	return delta{}, false
}

// isToken reports whether ev is a token (waitFor's "the first token").
func isToken(ev engine.Event) bool {
	_, ok := ev.(engine.Token)
	return ok
}

// funcProvider adapts a function to llm.Provider.
type funcProvider func(ctx context.Context, req llm.Request) (llm.Stream, error)

func (f funcProvider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	return f(ctx, req)
}

// chunkStream yields chunks, then err (io.EOF when nil).
type chunkStream struct {
	chunks []llm.Chunk
	err    error
}

func (s *chunkStream) Next() (llm.Chunk, error) {
	if len(s.chunks) > 0 {
		c := s.chunks[0]
		s.chunks = s.chunks[1:]
		return c, nil
	}
	if s.err != nil {
		return llm.Chunk{}, s.err
	}
	return llm.Chunk{}, io.EOF
}

func (s *chunkStream) Close() error { return nil }

// recordingProvider remembers the requests it forwards.
type recordingProvider struct {
	inner llm.Provider
	mu    sync.Mutex
	reqs  []llm.Request
}

func (p *recordingProvider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	return p.inner.Stream(ctx, req)
}

func (p *recordingProvider) requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llm.Request(nil), p.reqs...)
}
