package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// BenchmarkLoopStream1000Tokens measures one run that streams a
// 1000-token answer through the loop to a host that discards everything:
// the engine's per-token cost on top of the provider's (compare
// scripted's BenchmarkCount1000). ns/token = ns/op ÷ 1000.
func BenchmarkLoopStream1000Tokens(b *testing.B) {
	const tokens = 1000
	eng := newEngine(b, loop.Config{
		Provider: newScripted(b, scripted.Rule{Count: &scripted.Count{Number: "1000"}}),
	})
	ctx := context.Background()
	run := engine.Run{ID: "bench-run"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eng.Execute(ctx, run, engine.NoopHost{}, userBoard("stream")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}

// echoRules are the demo configuration's echo agent rules.
var echoRules = []scripted.Rule{
	{Match: `^stream (\d+) every (\d+)ms$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}, Delay: "{{index .Groups 2}}ms"},
	{Match: `^stream (\d+)$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}},
	{Match: `(?s).*`, Reply: "{{.Text}}"},
}

// framingHost is a minimal host shaped like agentd's runtime: it frames
// runs itself, offers an interrupt channel that never fires, and
// discards everything else.
type framingHost struct {
	engine.NoopHost
	interrupts chan engine.Interrupt
}

func (framingHost) FramesRuns() bool                      { return true }
func (h framingHost) Interrupts() <-chan engine.Interrupt { return h.interrupts }

// BenchmarkLoopEcho measures one run of the demo echo agent ("hello
// world" answered in two tokens) on a host that discards everything: the
// engine's and the scripted provider's cost per blocking send.
func BenchmarkLoopEcho(b *testing.B) {
	eng := newEngine(b, loop.Config{Provider: newScripted(b, echoRules...), AgentID: "echo", MaxIterations: 1, ToolNames: []string{}})
	host := framingHost{interrupts: make(chan engine.Interrupt, 1)}
	ctx := context.Background()
	run := engine.Run{ID: "bench-run", Attributes: map[string]string{"agent_id": "echo", "run_id": "bench-run", "task_id": "task-1", "context_id": "ctx-1"}}
	user := []model.Message{model.NewText(model.RoleUser, "hello world")}
	b.ReportAllocs()
	for b.Loop() {
		board := engine.NewBoard()
		board.SetChannel(engine.MainChannel, user)
		if _, err := eng.Execute(ctx, run, host, board); err != nil {
			b.Fatal(err)
		}
	}
}

// benchIterations is how many iterations a tool-loop benchmark run makes
// before its max_iterations budget ends it.
const benchIterations = 8

// noopTool is a parallel-safe tool that answers at once.
func noopTool() tool.Tool {
	return tool.New(tool.Spec{Name: "noop", Description: "does nothing", Flags: tool.Flags{ParallelSafe: true}},
		func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Text("ok"), nil })
}

// BenchmarkLoopIteration measures the loop's cost per iteration on the
// scripted model, on a host that discards everything: "no-tools" is a run
// of one iteration (a two-token answer); "4-parallel-tools" runs
// benchIterations iterations, each a turn calling four parallel-safe tools
// that answer at once, until max_iterations ends the run (expected:
// BudgetExceeded). ns/iteration is the figure to compare.
func BenchmarkLoopIteration(b *testing.B) {
	b.Run("no-tools", func(b *testing.B) {
		eng := newEngine(b, loop.Config{Provider: newScripted(b, scripted.Rule{Reply: "all done"}), ToolNames: []string{}, MaxIterations: 1})
		ctx := context.Background()
		run := engine.Run{ID: "bench-run"}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := eng.Execute(ctx, run, engine.NoopHost{}, userBoard("go")); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/iteration")
	})
	b.Run("4-parallel-tools", func(b *testing.B) {
		calls := make([]scripted.ToolCall, 4)
		for i := range calls {
			calls[i] = scripted.ToolCall{Name: "noop"}
		}
		eng := newEngine(b, loop.Config{
			Provider:      newScripted(b, scripted.Rule{ToolCalls: calls}, scripted.Rule{AfterTool: "noop", ToolCalls: calls}),
			Tools:         registry(b, &counter{}, noopTool()),
			ToolNames:     []string{"noop"},
			MaxIterations: benchIterations,
		})
		ctx := context.Background()
		run := engine.Run{ID: "bench-run"}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := eng.Execute(ctx, run, engine.NoopHost{}, userBoard("go")); !errdefs.IsBudgetExceeded(err) {
				b.Fatalf("want the max_iterations budget to end the run, got %v", err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchIterations), "ns/iteration")
	})
}

// compactionBoard is a conversation of n exchanges — a user message, a
// call of the counter tool and its result, an answer — of about 150
// tokens each, ending with a new question.
func compactionBoard(n int) []model.Message {
	pad := strings.Repeat("some words of context ", 6)
	var msgs []model.Message
	for i := range n {
		call := model.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "counter", Arguments: json.RawMessage(`{}`)}
		msgs = append(msgs,
			model.Message{ID: fmt.Sprintf("u%d", i), Role: model.RoleUser, Parts: []model.Part{model.TextPart("question " + pad)}},
			model.Message{ID: fmt.Sprintf("a%d", i), Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(call)}},
			model.Message{ID: fmt.Sprintf("r%d", i), Role: model.RoleTool, Parts: []model.Part{
				model.ToolResultPart(model.ToolResult{ToolCallID: call.ID, Name: "counter", Content: "result " + pad})}},
			model.Message{ID: fmt.Sprintf("b%d", i), Role: model.RoleAssistant, Parts: []model.Part{model.TextPart("answer " + pad)}})
	}
	return append(msgs, model.Message{ID: "q", Role: model.RoleUser, Parts: []model.Part{model.TextPart("go on")}})
}

// BenchmarkCompaction measures a run on a long history (200 exchanges,
// about 30k tokens): "compact" with an 8k window, where the run first
// summarises the oldest history (one call to the scripted model's digest)
// and then answers; "fits" with the default 128k window, the same run
// without compaction. The difference is compaction's own cost: sizing,
// rendering the summarisation request, the summary, the event.
func BenchmarkCompaction(b *testing.B) {
	history := compactionBoard(200)
	for _, c := range []struct {
		name   string
		window int
	}{{"compact", 8000}, {"fits", 0}} {
		b.Run(c.name, func(b *testing.B) {
			eng := newEngine(b, loop.Config{Provider: newScripted(b, scripted.Rule{Prefix: "go on", Reply: "done"}),
				SystemPrompt: "You are brief.", ToolNames: []string{"counter"}, ContextWindow: c.window})
			ctx := context.Background()
			run := engine.Run{ID: "bench-run"}
			b.ReportAllocs()
			for b.Loop() {
				board := engine.NewBoard()
				board.SetChannel(engine.MainChannel, history)
				if _, err := eng.Execute(ctx, run, engine.NoopHost{}, board); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
