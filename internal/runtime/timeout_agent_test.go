package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// An agent's timeout bounds each attempt: a run that passes it fails with
// class timeout and a message naming the timeout, and run.end is its last
// event.
func TestAgentTimeoutFailsTheRun(t *testing.T) {
	a := testAgent("slow", blocker(true, nil))
	a.Timeout = 50 * time.Millisecond
	r := newTestRuntime(t, nil, a)
	task := wait(t, r, send(t, r, "slow", "x").ID)
	if task.State != run.StateFailed || task.Error == nil || task.Error.Class != string(errdefs.ClassTimeout) ||
		!strings.Contains(task.Error.Message, "timeout of 50ms") {
		t.Fatalf("run after its timeout: %s %+v, want failed with a timeout naming it", task.State, task.Error)
	}
	evs := readAll(t, r, task.ID, 0, true)
	if evs[len(evs)-1].Type != EventRunEnd {
		t.Fatalf("last event %s, want run.end", evs[len(evs)-1].Type)
	}
}

// Budgets on a run's input tokens and wall time end it failed with
// BudgetExceeded naming the budget, run.end last.
func TestRunBudgets(t *testing.T) {
	spender := engine.EngineFunc(func(ctx context.Context, _ engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		if err := h.ReportUsage(ctx, "m", model.TokenUsage{InputTokens: 100, OutputTokens: 5, TotalTokens: 105}); err != nil {
			return b, err
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "spent"))
		return b, nil
	})
	in := testAgent("in", spender)
	in.MaxInputTokensPerRun = 50
	wall := testAgent("wall", blocker(true, nil))
	wall.MaxWallTime = 50 * time.Millisecond
	r := newTestRuntime(t, nil, in, wall)
	for _, c := range []struct{ agent, budget string }{{"in", "max_input_tokens_per_run of 50"}, {"wall", "max_wall_time of 50ms"}} {
		task := wait(t, r, send(t, r, c.agent, "x").ID)
		if task.State != run.StateFailed || task.Error == nil || task.Error.Class != string(errdefs.ClassBudgetExceeded) || !strings.Contains(task.Error.Message, c.budget) {
			t.Errorf("agent %s: %s %+v, want failed, budget_exceeded naming %s", c.agent, task.State, task.Error, c.budget)
		}
		if evs := readAll(t, r, task.ID, 0, true); evs[len(evs)-1].Type != EventRunEnd {
			t.Errorf("agent %s: last event %s, want run.end", c.agent, evs[len(evs)-1].Type)
		}
	}
}
