package goal

import (
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// A planner that never writes a valid workflow fails the run after
// MaxRetries corrections, naming the problems (class model_output), and
// runs nothing.
func TestPlannerThatNeverPlansFails(t *testing.T) {
	p := planner(t, invalidPlan, invalidPlan)
	steps := &stepAgents{}
	_, err := newEngine(t, p, steps, true).Execute(t.Context(), engine.Run{ID: "g"}, enginetest.NewRecordingHost(), goalBoard("go"))
	if errdefs.ClassOf(err) != errdefs.ClassModelOutput || !strings.Contains(err.Error(), `unknown step "reserch"`) {
		t.Fatalf("err %v (class %s), want model_output naming the problem", err, errdefs.ClassOf(err))
	}
	if n := p.turns.Load(); n != DefaultMaxRetries+1 {
		t.Errorf("planner called %d times, want %d", n, DefaultMaxRetries+1)
	}
	if steps.total() != 0 {
		t.Errorf("a step ran")
	}
}

// Answers in words: one not understood is asked again with the reason;
// "reject" ends the run (Validation: the run is rejected) and runs
// nothing.
func TestRejectedPlanRunsNothing(t *testing.T) {
	p := planner(t, validPlan, validPlan)
	steps := &stepAgents{}
	e := newEngine(t, p, steps, true)
	h1 := enginetest.NewRecordingHost()
	h1.AskUserFn = parks
	if _, err := e.Execute(t.Context(), engine.Run{ID: "g"}, h1, goalBoard("go")); !errdefs.IsInterrupted(err) {
		t.Fatal(err)
	}
	h2 := enginetest.NewRecordingHost()
	h2.AskUserFn = answers(engine.UserReply{Parts: []model.Part{model.TextPart("maybe later")}})
	if _, err := e.Execute(t.Context(), engine.Run{ID: "g", ResumeFrom: lastCheckpoint(t, h1)}, h2, nil); !errdefs.IsInterrupted(err) {
		t.Fatal(err)
	}
	if again := h2.Prompts()[1].Parts[0].Text; !strings.Contains(again, `Your answer "maybe later" was not understood.`) {
		t.Fatalf("asked again with:\n%s", again)
	}
	h3 := enginetest.NewRecordingHost()
	h3.AskUserFn = answers(engine.UserReply{Parts: []model.Part{model.TextPart("reject")}})
	_, err := e.Execute(t.Context(), engine.Run{ID: "g", ResumeFrom: lastCheckpoint(t, h2)}, h3, nil)
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), "the plan was rejected") {
		t.Fatalf("rejected plan: %v", err)
	}
	if steps.total() != 0 || p.turns.Load() != 1 {
		t.Errorf("%d steps ran, planner called %d times; want 0 and 1", steps.total(), p.turns.Load())
	}
}

// A run stopped during its plan resumes from its last checkpoint without
// planning again: the steps that finished are not run again, the
// interrupted one is, and the result lists every step.
func TestResumeRunsOnlyUnfinishedSteps(t *testing.T) {
	const plan = "name: chain\nsteps:\n  - {id: a, agent: researcher}\n  - {id: b, agent: writer, dependsOn: [a]}\n" +
		"  - {id: wait, agent: blocker, dependsOn: [b]}\n  - {id: c, agent: writer, dependsOn: [wait]}"
	p := planner(t, plan, plan)
	first := &stepAgents{}
	h1 := enginetest.NewRecordingHost()
	done := make(chan error, 1)
	go func() {
		_, err := newEngine(t, p, first, false).Execute(t.Context(), engine.Run{ID: "g"}, h1, goalBoard("go"))
		done <- err
	}()
	if _, err := h1.WaitForStep(t.Context(), engine.NodeActor("goal", "wait")); err != nil {
		t.Fatal(err)
	}
	h1.Fire(engine.Interrupt{Cause: engine.CauseHostShutdown})
	if err := <-done; !errdefs.IsInterrupted(err) {
		t.Fatalf("interrupted run returned %v", err)
	}
	if _, ok := artifact(h1, "goal-result"); ok {
		t.Errorf("an interrupted run published a result")
	}
	cp := lastCheckpoint(t, h1)
	if cp.Step != "goal:graph:step:b" {
		t.Fatalf("last checkpoint at %q, want after step b", cp.Step)
	}

	second := &stepAgents{noBlock: true}
	h2 := enginetest.NewRecordingHost()
	if _, err := newEngine(t, p, second, false).Execute(t.Context(), engine.Run{ID: "g", ResumeFrom: cp}, h2, nil); err != nil {
		t.Fatal(err)
	}
	if p.turns.Load() != 1 {
		t.Errorf("planner called %d times, want once", p.turns.Load())
	}
	for step, want := range map[string]int{"a": 0, "b": 0, "wait": 1, "c": 1} {
		if got := second.count(step); got != want {
			t.Errorf("resumed run ran step %s %d times, want %d", step, got, want)
		}
	}
	checkResult(t, h2, map[string]string{"a": "completed", "b": "completed", "wait": "completed", "c": "completed"})
}

// A plan may use only the offered agents, and every step names one; the
// problems carry their path.
func TestPlanUsesOnlyOfferedAgents(t *testing.T) {
	e := newEngine(t, planner(t, validPlan, validPlan), &stepAgents{}, false)
	for _, c := range []struct{ name, doc, want string }{
		{"unknown agent", "name: x\nsteps: [{id: a, agent: painter}]", `steps[0].agent: unknown agent "painter"`},
		{"no agent", "name: x\nsteps: [{id: a, instructions: Go.}]", "steps[0].agent: required in a plan"},
		{"own model", "name: x\nagents: {w: {description: W, model: gpt-4o}}\nsteps: [{id: a, agent: w}]", `agents.w: "w" is not an agent this plan may use`},
		{"step model", "name: x\nsteps: [{id: a, agent: writer, model: gpt-4o}]", `steps[0].model: "gpt-4o": a plan's step may only name another agent`},
		{"other hosted agent", "name: x\nsteps: [{id: a, agent: writer, model: 'agent:admin'}]", `steps[0].model: "agent:admin" is not an agent this plan may use`},
		{"a file reference", "name: x\nsteps: [{id: a, agent: writer, instructions: '@secrets.txt'}]", "steps[0].instructions"},
		{"not a workflow", "just words", "a workflow is a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.check([]byte(c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("check: %v, want a problem with %q", err, c.want)
			}
		})
	}
	if _, err := e.check([]byte("name: x\nsteps: [{id: a, agent: writer, model: 'agent:researcher'}]")); err != nil {
		t.Fatalf("a step on another offered agent: %v", err)
	}
}
