package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
)

// benchAgents answers every step at once the way a scripted model does:
// three streamed tokens, then the answer on the board — or, with pause,
// after sleeping that long.
type benchAgents struct{ pause time.Duration }

func (a benchAgents) Engine(AgentSpec) (engine.Engine, error) {
	return engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		if a.pause > 0 {
			t := time.NewTimer(a.pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return b, ctx.Err()
			}
		}
		for _, tok := range []string{"step", " is", " done"} {
			_ = h.Publish(ctx, engine.Token{Actor: "worker", Text: tok})
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "step is done"))
		return b, nil
	}), nil
}

// chainDoc is a workflow of n steps, each depending on the one before.
func chainDoc(n int) string {
	var b strings.Builder
	b.WriteString("name: chain\nagents: {w: {description: Works.}}\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: s%d, agent: w, instructions: Step %d.", i, i)
		if i > 0 {
			fmt.Fprintf(&b, ", dependsOn: [s%d]", i-1)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// wideDoc is a 100-step wide DAG: a root, 98 steps that depend on it
// alone, and a sink that depends on all 98 — a critical path of 3 steps.
func wideDoc(maxConcurrency int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: wide\nagents: {w: {description: Works.}}\noptions: {maxConcurrency: %d}\nsteps:\n  - {id: root, agent: w}\n", maxConcurrency)
	var mids []string
	for i := range 98 {
		id := fmt.Sprintf("m%d", i)
		mids = append(mids, id)
		fmt.Fprintf(&b, "  - {id: %s, agent: w, dependsOn: [root]}\n", id)
	}
	fmt.Fprintf(&b, "  - {id: sink, agent: w, dependsOn: [%s]}\n", strings.Join(mids, ", "))
	return b.String()
}

func benchEngine(b *testing.B, doc string, agents Agents) *Engine {
	b.Helper()
	w, err := Parse([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(Config{Workflow: w, Agents: agents, AgentID: "wf"})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func runOnce(b *testing.B, e *Engine) {
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "go"))
	if _, err := e.Execute(b.Context(), engine.Run{ID: "bench"}, engine.NoopHost{}, board); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStepOverhead is the engine's cost per step — scheduling, the
// prompt, the child run's host and event nesting, the step events, the
// artifact, the result and the checkpoint after it — with agents that
// answer at once (ns/step). The checkpoint holds every result so far, so
// the cost per step grows with the workflow.
func BenchmarkStepOverhead(b *testing.B) {
	for _, tc := range []struct {
		name string
		doc  string
		n    int
	}{
		{"chain10", chainDoc(10), 10},
		{"chain100", chainDoc(100), 100},
		{"wide100", wideDoc(100), 100},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := benchEngine(b, tc.doc, benchAgents{})
			b.ReportAllocs()
			for b.Loop() {
				runOnce(b, e)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tc.n), "ns/step")
		})
	}
}

// BenchmarkWideMakespan runs the 100-step wide DAG with agents that take
// 20 ms each and reports its makespan against its critical path (3 steps,
// 60 ms) — with maxConcurrency 100, all 98 middle steps at once; with the
// default 5, the bound is 22 rounds of 20 ms (root, 98/5 rounded up,
// sink: 440 ms).
func BenchmarkWideMakespan(b *testing.B) {
	const pause = 20 * time.Millisecond
	for _, tc := range []struct {
		concurrency int
		bound       time.Duration
	}{
		{100, 3 * pause},
		{5, (1 + 20 + 1) * pause},
	} {
		b.Run(fmt.Sprintf("maxConcurrency%d", tc.concurrency), func(b *testing.B) {
			e := benchEngine(b, wideDoc(tc.concurrency), benchAgents{pause: pause})
			var spans []time.Duration
			for b.Loop() {
				start := time.Now()
				runOnce(b, e)
				spans = append(spans, time.Since(start))
			}
			slices.Sort(spans)
			median := spans[len(spans)/2]
			b.ReportMetric(float64(median.Microseconds())/1000, "ms-makespan")
			b.ReportMetric(float64(tc.bound.Microseconds())/1000, "ms-bound")
			b.ReportMetric(float64(median)/float64(tc.bound), "makespan/bound")
		})
	}
}
