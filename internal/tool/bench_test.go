package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"agentd/internal/tool"
)

// BenchmarkExecuteCalculator measures one model call end to end through the
// registry: argument decoding, schema validation, evaluation, formatting.
func BenchmarkExecuteCalculator(b *testing.B) {
	reg := builtins(b)
	call := tool.Call{ID: "c1", Name: tool.CalculatorName, Arguments: json.RawMessage(`{"expression":"(2 + 3) * 4 ^ 2 / sqrt(16) - max(1, 2.5)"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := reg.Execute(ctx, call); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// BenchmarkExecuteInvalidArguments measures the rejection path a model hits
// when it gets the arguments wrong.
func BenchmarkExecuteInvalidArguments(b *testing.B) {
	reg := builtins(b)
	call := tool.Call{ID: "c1", Name: tool.CalculatorName, Arguments: json.RawMessage(`{"expr":"1+1"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := reg.Execute(ctx, call); !res.IsError {
			b.Fatal("want an error result")
		}
	}
}

// BenchmarkExecuteAllParallel measures a turn of four parallel-safe calls.
func BenchmarkExecuteAllParallel(b *testing.B) {
	reg := builtins(b)
	args := json.RawMessage(`{"expression":"1 + 2 * 3"}`)
	calls := []tool.Call{
		{ID: "a", Name: tool.CalculatorName, Arguments: args},
		{ID: "b", Name: tool.CalculatorName, Arguments: args},
		{ID: "c", Name: tool.ClockName},
		{ID: "d", Name: tool.CalculatorName, Arguments: args},
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		reg.ExecuteAll(ctx, calls)
	}
}
