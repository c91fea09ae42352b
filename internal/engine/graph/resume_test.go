package graph

import (
	"context"
	"slices"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

const durableDoc = `{name: durable, agents: {last: {description: last}}, steps: [
	{id: s1, instructions: One}, {id: s2, instructions: Two, dependsOn: [s1]}, {id: s3, instructions: Three, dependsOn: [s2]},
	{id: s4, agent: last, dependsOn: [s3]}]}`

// An interrupted run resumes from its last checkpoint on a fresh engine:
// the steps that finished are not run again, the interrupted one is.
func TestResumeSkipsFinishedSteps(t *testing.T) {
	first := newFakeAgents(map[string]behaviour{"last": block})
	h := enginetest.NewRecordingHost()
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "go"))
	done := make(chan error, 1)
	go func() {
		_, err := newTestEngine(t, durableDoc, first).Execute(t.Context(), engine.Run{ID: "r"}, h, board)
		done <- err
	}()
	if _, err := h.WaitForStep(t.Context(), engine.NodeActor("wf", "s4")); err != nil {
		t.Fatal(err)
	}
	h.Fire(engine.Interrupt{Cause: engine.CauseHostShutdown})
	if err := <-done; !errdefs.IsInterrupted(err) {
		t.Fatalf("interrupted run returned %v", err)
	}
	cps := h.Checkpoints()
	last := cps[len(cps)-1]

	second := newFakeAgents(nil)
	h2 := enginetest.NewRecordingHost()
	out, err := newTestEngine(t, durableDoc, second).Execute(t.Context(), engine.Run{ID: "r", ResumeFrom: &last}, h2, engine.NewBoard())
	if err != nil {
		t.Fatal(err)
	}
	if got := second.stepsCalled(); !slices.Equal(got, []string{"s4"}) {
		t.Errorf("resumed run called %v, want only the interrupted s4", got)
	}
	if c, _ := second.callOf("s4"); !contains(c.Prompt, "## Output of step s3\ndefault did Three", "## Request\ngo") {
		t.Errorf("resumed step lost its context:\n%s", c.Prompt)
	}
	if a := answerOf(out); a != "last did "+firstLine(mustCall(t, second, "s4").Prompt) {
		t.Errorf("answer %q", a)
	}
}

// A step whose agent asks the user parks the whole workflow; the answer
// resumes that step (the runtime's AskUser: interrupt, then reply on the
// next attempt).
func TestInputRequiredParksAndResumes(t *testing.T) {
	asks := map[string]behaviour{"asker": func(ctx context.Context, c call) (string, error) {
		r, err := c.host.AskUser(ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("which region?")}})
		if err != nil {
			return "", err
		}
		return "deploying to " + r.Text(), nil
	}}
	doc := `{name: ask, agents: {asker: {description: asks}}, steps: [{id: plan}, {id: deploy, agent: asker, dependsOn: [plan]}]}`
	parked := engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"}
	h := enginetest.NewRecordingHost()
	h.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{}, engine.Interrupted(parked)
	}
	agents := newFakeAgents(asks)
	_, err := newTestEngine(t, doc, agents).Execute(t.Context(), engine.Run{ID: "r"}, h, engine.NewBoard())
	if !errdefs.IsInterrupted(err) || err.Error() != engine.Interrupted(parked).Error() {
		t.Fatalf("asking step returned %v, want the host's input-required interrupt", err)
	}
	if p := h.Prompts(); len(p) != 1 || p[0].Source != "wf.node.deploy" {
		t.Fatalf("prompts %+v", p)
	}
	cps := h.Checkpoints()
	last := cps[len(cps)-1]
	h2 := enginetest.NewRecordingHost()
	h2.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{Parts: []model.Part{model.TextPart("eu-west")}}, nil
	}
	out, err := newTestEngine(t, doc, agents).Execute(t.Context(), engine.Run{ID: "r", ResumeFrom: &last}, h2, engine.NewBoard())
	if err != nil {
		t.Fatal(err)
	}
	if a := answerOf(out); a != "deploying to eu-west" {
		t.Errorf("answer %q", a)
	}
	if n := count(agents.stepsCalled(), "plan"); n != 1 {
		t.Errorf("plan ran %d times", n)
	}
}

func count(s []string, v string) (n int) {
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func mustCall(t *testing.T, f *fakeAgents, step string) call {
	t.Helper()
	c, ok := f.callOf(step)
	if !ok {
		t.Fatalf("step %s not called", step)
	}
	return c
}
