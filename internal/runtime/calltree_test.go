package runtime

import (
	"context"
	"strings"
	"testing"

	"agentd/internal/calltree"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	runv "agentd/internal/run"
	"agentd/internal/store/memstore"
)

// bouncer hands its conversation off at run time, as a child run of the
// agent next names after the current one, forever: only the call-tree
// guard stops it.
type bouncer struct{ next func(current string) string }

func (b bouncer) Execute(ctx context.Context, run engine.Run, h engine.Host, board *engine.Board) (out *engine.Board, err error) {
	c, _ := calltree.FromContext(ctx)
	to := b.next(c.Links[len(c.Links)-1].Agent)
	return h.(engine.ChildRunner).RunChild(ctx, engine.ChildRun{
		Key: "handoff-" + to, Step: "handoff", AgentID: to, Host: dropEvents{h},
		Run: engine.Run{ParentRunID: run.ID},
	}, b, board)
}

// Hand-offs built at run time: a → b → a is stopped with the cycle named
// after two child runs; a chain of distinct agents stops at the depth
// limit. Either way the tree holds a bounded number of runs.
func TestCallTreeStopsRunTimeCycles(t *testing.T) {
	pingPong := bouncer{next: func(cur string) string { return map[string]string{"a": "b", "b": "a"}[cur] }}
	r := newTestRuntime(t, nil, testAgent("a", pingPong), testAgent("b", pingPong))
	got := wait(t, r, send(t, r, "a", "go").ID)
	if got.State != runv.StateFailed || got.Error == nil || got.Error.Class != string(errdefs.ClassConflict) ||
		!strings.Contains(got.Error.Message, "call cycle a → b → a") {
		t.Fatalf("ping-pong run %s %+v, want failed naming the cycle a → b → a", got.State, got.Error)
	}
	page, err := r.ListTasks(ctxT(t), runv.TaskQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 2 {
		t.Errorf("%d tasks, want the run and its one child (b)", page.Total)
	}

	deeper := bouncer{next: func(cur string) string { return cur + "x" }}
	r = startRuntime(t, Options{Store: memstore.New(), Agents: []*Agent{testAgent("a", deeper)}, CallTree: calltree.Limits{MaxDepth: 4}})
	got = wait(t, r, send(t, r, "a", "go").ID)
	if got.State != runv.StateFailed || got.Error == nil || got.Error.Class != string(errdefs.ClassBudgetExceeded) ||
		!strings.Contains(got.Error.Message, "a → ax → axx → axxx") || !strings.Contains(got.Error.Message, "max_call_depth of 4") {
		t.Fatalf("deep run %s %+v, want budget_exceeded at depth 4", got.State, got.Error)
	}
	if page, err = r.ListTasks(ctxT(t), runv.TaskQuery{Limit: 100}); err != nil || page.Total != 4 {
		t.Errorf("%d tasks (%v), want 4: the root and three children", page.Total, err)
	}
}
