package loop_test

import (
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// A model turn that outlasts turn_timeout fails the run with a Timeout
// naming it; the run's own context is not what stopped it.
func TestTurnTimeout(t *testing.T) {
	eng := newEngine(t, loop.Config{TurnTimeout: 50 * time.Millisecond})
	_, err := execute(t, eng, engine.Run{ID: "r-turn"}, userBoard("block"), nil)
	if !errdefs.IsTimeout(err) || !strings.Contains(err.Error(), "turn_timeout of 50ms") {
		t.Fatalf("a blocked turn: %v, want a Timeout naming turn_timeout", err)
	}
}

// Sampling settings reach every model request; a disallowed tool is
// neither offered nor run, even when the agent lists it.
func TestSamplingAndDisallowedTools(t *testing.T) {
	temp, topP := 0.2, 0.9
	rec := &recordingProvider{inner: newScripted(t, calcRules()...)}
	eng := newEngine(t, loop.Config{
		Provider: rec, Temperature: &temp, TopP: &topP, MaxTokens: 77,
		DisallowedTools: []string{tool.CalculatorName},
	})
	board, err := execute(t, eng, engine.Run{ID: "r-sampling"}, userBoard("what is 2+2?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	for _, r := range reqs {
		if r.Temperature == nil || *r.Temperature != temp || r.TopP == nil || *r.TopP != topP || r.MaxTokens != 77 {
			t.Fatalf("request sampling: temperature %v, top_p %v, max_tokens %d", r.Temperature, r.TopP, r.MaxTokens)
		}
		for _, s := range r.Tools {
			if s.Name == tool.CalculatorName {
				t.Fatalf("the disallowed calculator was offered: %+v", r.Tools)
			}
		}
	}
	// The model called it anyway: the call got an error result.
	var refused bool
	for _, m := range board.Channel(engine.MainChannel) {
		for _, p := range m.Parts {
			if p.ToolResult != nil && p.ToolResult.IsError {
				refused = true
			}
		}
	}
	if !refused {
		t.Fatalf("the disallowed tool's call was not refused: %+v", board.Channel(engine.MainChannel))
	}
	if _, err := loop.New(loop.Config{Provider: rec, Tools: registry(t, &counter{}), DisallowedTools: []string{"clok"}}); err == nil || !strings.Contains(err.Error(), `disallowed_tools[0]: unknown tool "clok"`) {
		t.Fatalf("an unknown disallowed tool: %v", err)
	}
}

// A run over its tool-call budget stops mid-loop: the call that passes it
// is answered unrun (the transcript stays well formed) and the run fails
// with BudgetExceeded naming the budget.
func TestMaxToolCalls(t *testing.T) {
	cnt := &counter{}
	eng := newEngine(t, loop.Config{Tools: registry(t, cnt), MaxToolCalls: 3, MaxIterations: 20})
	board, err := execute(t, eng, engine.Run{ID: "r-calls"}, userBoard("loop"), nil)
	if !errdefs.IsBudgetExceeded(err) || !strings.Contains(err.Error(), "max_tool_calls_per_run of 3") {
		t.Fatalf("a run calling tools forever: %v, want BudgetExceeded naming max_tool_calls", err)
	}
	if got := cnt.calls.Load(); got != 3 {
		t.Errorf("%d tool calls ran, want 3", got)
	}
	last := board.Channel(engine.MainChannel)
	if m := last[len(last)-1]; m.Role != model.RoleTool {
		t.Errorf("the board ends with %s, want the unrun call's result", m.Role)
	}
}

// A batch of parallel calls that passes the tool-call budget is answered
// unrun as a whole: none of it runs (a batch is not split), every call gets
// a result, and the run fails naming the budget.
func TestMaxToolCallsParallelBatch(t *testing.T) {
	cnt := &counter{}
	three := []scripted.ToolCall{{Name: "counter"}, {Name: "counter"}, {Name: "counter"}}
	rules := []scripted.Rule{
		{Prefix: "batch", ToolCalls: three},
		{Prefix: "batch", AfterTool: "counter", ToolCalls: three},
	}
	eng := newEngine(t, loop.Config{Provider: newScripted(t, rules...), Tools: registry(t, cnt), MaxToolCalls: 4, MaxIterations: 20})
	board, err := execute(t, eng, engine.Run{ID: "r-batch"}, userBoard("batch"), nil)
	if !errdefs.IsBudgetExceeded(err) || !strings.Contains(err.Error(), "6 tool calls, over the budget max_tool_calls_per_run of 4") {
		t.Fatalf("a second batch of 3 with a budget of 4: %v, want BudgetExceeded naming max_tool_calls_per_run", err)
	}
	if got := cnt.calls.Load(); got != 3 {
		t.Errorf("%d tool calls ran, want the first batch's 3", got)
	}
	msgs := board.Channel(engine.MainChannel)
	var unrun int
	for _, m := range msgs[len(msgs)-3:] {
		if tr := m.Parts[0].ToolResult; m.Role == model.RoleTool && tr != nil && tr.IsError && strings.Contains(tr.Content, "max_tool_calls_per_run") {
			unrun++
		}
	}
	if unrun != 3 {
		t.Errorf("the last batch's results: %d of 3 name the budget; board ends %+v", unrun, msgs[len(msgs)-3:])
	}
}
