package loop_test

import (
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

func TestNewValidates(t *testing.T) {
	prov := newScripted(t, calcRules()...)
	reg := registry(t, &counter{})
	tests := []struct {
		name string
		cfg  loop.Config
		want string // fragment of the Validation error; "" means valid
	}{
		{name: "minimal", cfg: loop.Config{Provider: prov}},
		{name: "with tools", cfg: loop.Config{Provider: prov, Tools: reg, ToolNames: []string{"counter", tool.CalculatorName}}},
		{name: "nil provider", cfg: loop.Config{AgentID: "a"}, want: "provider is required"},
		{name: "unknown tool", cfg: loop.Config{Provider: prov, Tools: reg, ToolNames: []string{"counter", "clok"}},
			want: `tools[1]: unknown tool "clok"`},
		{name: "tool listed twice", cfg: loop.Config{Provider: prov, Tools: reg, ToolNames: []string{"counter", "counter"}},
			want: `tools[1]: tool "counter" listed twice`},
		{name: "tools without a registry", cfg: loop.Config{Provider: prov, ToolNames: []string{"counter"}},
			want: "without a tool registry"},
		{name: "negative max_iterations", cfg: loop.Config{Provider: prov, MaxIterations: -1}, want: "max_iterations -1"},
		{name: "negative max_tokens", cfg: loop.Config{Provider: prov, MaxTokens: -5}, want: "max_tokens -5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng, err := loop.New(tc.cfg)
			if tc.want == "" {
				if err != nil || eng == nil {
					t.Fatalf("New: %v", err)
				}
				caps := engine.CapabilitiesOf(eng)
				if !caps.SupportsResume || !caps.EmitsCheckpoint {
					t.Errorf("capabilities = %+v, want resume and checkpoints", caps)
				}
				return
			}
			if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err = %v (class %q), want a Validation error containing %q", err, errdefs.ClassOf(err), tc.want)
			}
		})
	}
}

func TestCanResume(t *testing.T) {
	eng := newEngine(t, loop.Config{SpecVersion: "v2"})
	board := engine.NewBoard().Snapshot()
	valid := engine.Checkpoint{ExecID: "r", Step: "iter:3", Iteration: 3, Board: board, Timestamp: time.Now(), SpecVersion: "v2"}
	with := func(f func(*engine.Checkpoint)) engine.Checkpoint { cp := valid; f(&cp); return cp }
	tests := []struct {
		name  string
		cp    engine.Checkpoint
		class errdefs.Class // "" means resumable
	}{
		{name: "own checkpoint", cp: valid},
		{name: "no spec version recorded", cp: with(func(cp *engine.Checkpoint) { cp.SpecVersion = "" })},
		{name: "spec drift", cp: with(func(cp *engine.Checkpoint) { cp.SpecVersion = "v1" }), class: errdefs.ClassConflict},
		{name: "foreign step", cp: with(func(cp *engine.Checkpoint) { cp.Step = "node:a" }), class: errdefs.ClassValidation},
		{name: "step without number", cp: with(func(cp *engine.Checkpoint) { cp.Step = "iter:x" }), class: errdefs.ClassValidation},
		{name: "iteration zero", cp: with(func(cp *engine.Checkpoint) { cp.Step, cp.Iteration = "iter:0", 0 }), class: errdefs.ClassValidation},
		{name: "step disagrees with iteration", cp: with(func(cp *engine.Checkpoint) { cp.Iteration = 2 }), class: errdefs.ClassValidation},
		{name: "no board", cp: with(func(cp *engine.Checkpoint) { cp.Board = nil }), class: errdefs.ClassValidation},
		{name: "no exec id", cp: with(func(cp *engine.Checkpoint) { cp.ExecID = "" }), class: errdefs.ClassValidation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errdefs.ClassOf(eng.CanResume(tc.cp)); got != tc.class {
				t.Errorf("CanResume: class %q, want %q", got, tc.class)
			}
		})
	}
}

func TestIdempotencyKeyIsDeterministic(t *testing.T) {
	if got := loop.IdempotencyKey("run-1", 2, "call_7"); got != "run-1:2:call_7" {
		t.Errorf("IdempotencyKey = %q", got)
	}
}
