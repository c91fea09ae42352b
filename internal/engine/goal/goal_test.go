package goal

import (
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// The planner's first answer depends on a step that does not exist
// ("reserch"); told so, it corrects it.
const (
	invalidPlan = "Here is the plan:\n```yaml\nname: report\nsteps:\n" +
		"  - {id: research, agent: researcher, instructions: Find the facts.}\n" +
		"  - {id: write, agent: writer, instructions: Write it up., dependsOn: [reserch]}\n```"
	validPlan = "```yaml\nname: report\nsteps:\n" +
		"  - {id: research, agent: researcher, instructions: Find the facts.}\n" +
		"  - {id: write, agent: writer, instructions: Write it up., dependsOn: [research]}\n```"
)

// editedPlan is what the person changes the plan into: a third step.
const editedPlan = `{"name": "report", "steps": [
	{"id": "research", "agent": "researcher", "instructions": "Find the facts."},
	{"id": "write", "agent": "writer", "instructions": "Write it up.", "dependsOn": ["research"]},
	{"id": "review", "agent": "writer", "instructions": "Review it.", "dependsOn": ["write"]}]}`

// A goal run from start to end, as the runtime drives it: the planner's
// invalid workflow goes back to it with the problem and comes back
// valid; the plan is shown and waits for approval (the run parks); an
// edit that uses an agent the goal does not offer is asked about again
// with the problem; a valid edit runs, each step once, and the result
// lists every step. No attempt after the first plans again.
func TestGoalRunPlansAsksAndRunsTheEditedPlan(t *testing.T) {
	p := planner(t, invalidPlan, validPlan)
	steps := &stepAgents{}
	e := newEngine(t, p, steps, true)

	// Attempt 1: plan (corrected once), show, park for approval.
	h1 := enginetest.NewRecordingHost()
	h1.AskUserFn = parks
	_, err := e.Execute(t.Context(), engine.Run{ID: "g"}, h1, goalBoard("write a report on tides"))
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("attempt 1 returned %v, want the park for approval", err)
	}
	if n := p.turns.Load(); n != 2 {
		t.Fatalf("planner called %d times, want 2 (one invalid answer, one corrected)", n)
	}
	if steps.total() != 0 {
		t.Fatalf("steps ran before the plan was approved")
	}
	prompts := h1.Prompts()
	pending := engine.PendingApprovals(prompts[len(prompts)-1].Parts)
	if len(prompts) != 1 || len(pending) != 1 || pending[0].CallID != "plan-1" || pending[0].Tool != approvalTool {
		t.Fatalf("approval prompt: %+v", prompts)
	}
	var doc struct {
		Agents map[string]struct{ Model string } `json:"agents"`
		Steps  []struct{ DependsOn []string }    `json:"steps"`
	}
	if err := json.Unmarshal(pending[0].Arguments, &doc); err != nil || doc.Agents["writer"].Model != "agent:writer" || doc.Steps[1].DependsOn[0] != "research" {
		t.Fatalf("pending plan %s (%v): want the corrected plan with its agents declared", pending[0].Arguments, err)
	}
	checkPlanShown(t, h1, []string{"research", "write"})
	checkPlannerAsked(t, h1, 2)

	// Attempt 2: an edit naming an agent not offered is asked about again.
	bad := strings.Replace(editedPlan, `"agent": "writer", "instructions": "Review it."`, `"agent": "painter", "instructions": "Review it."`, 1)
	h2 := enginetest.NewRecordingHost()
	h2.AskUserFn = answers(approvalReply(t, engine.ApprovalAnswer{CallID: "plan-1", Decision: engine.DecisionEdit, Arguments: json.RawMessage(bad)}))
	_, err = e.Execute(t.Context(), engine.Run{ID: "g", ResumeFrom: lastCheckpoint(t, h1)}, h2, engine.NewBoard())
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("attempt 2 returned %v, want a park: the edit was invalid", err)
	}
	again := h2.Prompts()[1]
	if p := engine.PendingApprovals(again.Parts); len(p) != 1 || p[0].CallID != "plan-2" ||
		!strings.Contains(again.Parts[0].Text, "The edited plan is not valid") || !strings.Contains(again.Parts[0].Text, `steps[2].agent: unknown agent "painter"`) {
		t.Fatalf("second prompt: pending %+v, text:\n%s", p, again.Parts[0].Text)
	}

	// Attempt 3: a valid edit runs.
	h3 := enginetest.NewRecordingHost()
	h3.AskUserFn = answers(approvalReply(t, engine.ApprovalAnswer{CallID: "plan-2", Decision: engine.DecisionEdit, Arguments: json.RawMessage(editedPlan)}))
	out, err := e.Execute(t.Context(), engine.Run{ID: "g", ResumeFrom: lastCheckpoint(t, h2)}, h3, engine.NewBoard())
	if err != nil {
		t.Fatalf("attempt 3: %v", err)
	}
	if n := p.turns.Load(); n != 2 {
		t.Errorf("planner called %d times in all, want 2: a resume never plans again", n)
	}
	for _, s := range []string{"research", "write", "review"} {
		if n := steps.count(s); n != 1 {
			t.Errorf("step %s ran %d times, want once", s, n)
		}
	}
	checkPlanShown(t, h3, []string{"research", "write", "review"})
	checkResult(t, h3, map[string]string{"research": "completed", "write": "completed", "review": "completed"})
	msgs := out.Channel(engine.MainChannel)
	if last := msgs[len(msgs)-1]; last.Role != model.RoleAssistant || last.Text() != "writer did review" {
		t.Errorf("answer %q, want the last step's", last.Text())
	}
}

// checkPlanShown: the plan event (shaped as the graph's, with the
// document) and the plan artifact were published.
func checkPlanShown(t *testing.T, h *enginetest.RecordingHost, ids []string) {
	t.Helper()
	var plan struct {
		Workflow string
		Goal     bool
		Steps    []struct{ ID string }
		Document json.RawMessage
	}
	for _, ev := range h.Events() {
		if p, ok := ev.(engine.Plan); ok && strings.Contains(string(p.Plan), `"goal":true`) {
			if err := json.Unmarshal(p.Plan, &plan); err != nil {
				t.Fatal(err)
			}
		}
	}
	if plan.Workflow != "report" || len(plan.Steps) != len(ids) || len(plan.Document) == 0 {
		t.Fatalf("plan event %+v, want workflow report with steps %v", plan, ids)
	}
	for i, id := range ids {
		if plan.Steps[i].ID != id {
			t.Errorf("plan step %d is %q, want %q", i, plan.Steps[i].ID, id)
		}
	}
	a, ok := artifact(h, "goal-plan")
	if !ok || !strings.HasPrefix(a.Parts[0].Text, "name: report\n") || !strings.Contains(a.Parts[0].Text, "steps:\n  - id: research\n    agent: researcher\n") {
		t.Errorf("plan artifact, want the YAML in the document's order:\n%s", a.Parts[0].Text)
	}
}

// checkPlannerAsked: one planner step per planner call, each ended.
func checkPlannerAsked(t *testing.T, h *enginetest.RecordingHost, want int) {
	t.Helper()
	n := 0
	for _, ev := range h.Events() {
		if s, ok := ev.(engine.StepCompleted); ok && s.Actor == engine.NodeActor("goal", "planner") {
			n++
		}
	}
	if n != want {
		t.Errorf("%d planner steps completed, want %d", n, want)
	}
}

// checkResult: the result artifact lists every step with its status.
func checkResult(t *testing.T, h *enginetest.RecordingHost, want map[string]string) {
	t.Helper()
	a, ok := artifact(h, "goal-result")
	if !ok {
		t.Fatal("no result artifact")
	}
	var res struct {
		Done  bool
		Steps []struct{ ID, Status string }
	}
	dataOf(t, a, &res)
	if len(res.Steps) != len(want) {
		t.Fatalf("result lists %d steps, want %d: %+v", len(res.Steps), len(want), res)
	}
	for _, s := range res.Steps {
		if want[s.ID] != s.Status {
			t.Errorf("result: step %s %q, want %q", s.ID, s.Status, want[s.ID])
		}
		if !strings.Contains(a.Parts[0].Text, "- "+s.ID+": "+s.Status) {
			t.Errorf("result text lacks step %s:\n%s", s.ID, a.Parts[0].Text)
		}
	}
	if !res.Done {
		t.Errorf("result not done")
	}
}
