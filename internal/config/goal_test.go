package config

import (
	"context"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// The goal demo on the scripted model: the plan waits for approval, and
// once approved runs its two steps on the hosted assistant and echo
// agents; the result lists both.
func TestGoalDemo(t *testing.T) {
	a := demoAgent(t, "goal")
	h1 := enginetest.NewRecordingHost()
	h1.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{}, engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})
	}
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "tell me the time twice"))
	if _, err := a.Engine.Execute(t.Context(), engine.Run{ID: "demo"}, h1, b); !errdefs.IsInterrupted(err) {
		t.Fatalf("first attempt: %v, want a park for approval", err)
	}
	cps := h1.Checkpoints()
	pending := engine.PendingApprovals(h1.Prompts()[0].Parts)
	if len(pending) != 1 || !strings.Contains(string(pending[0].Arguments), `"model":"agent:assistant"`) {
		t.Fatalf("pending %+v", pending)
	}
	h2 := enginetest.NewRecordingHost()
	h2.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{Parts: []model.Part{model.TextPart("approve")}}, nil
	}
	out, err := a.Engine.Execute(t.Context(), engine.Run{ID: "demo", ResumeFrom: &cps[len(cps)-1]}, h2, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := out.Channel(engine.MainChannel)
	if got := msgs[len(msgs)-1].Text(); !strings.HasPrefix(got, "Repeat the time.") || !strings.Contains(got, "It is ") {
		t.Errorf("answer %q, want the echo of the clock step", got)
	}
	var result string
	for _, ev := range h2.Events() {
		if u, ok := ev.(engine.ArtifactUpdate); ok && u.Artifact.Name == "result" {
			result = u.Artifact.Parts[0].Text
		}
	}
	if !strings.Contains(result, "- clock: completed") || !strings.Contains(result, "- repeat: completed") {
		t.Errorf("result:\n%s", result)
	}
}

func TestGoalAgentConfig(t *testing.T) {
	base := "providers:\n  p: {type: scripted, rules: [{reply: hi}]}\nagents:\n" +
		"  - {id: w, engine: loop, provider: p}\n  - {id: g, engine: goal, provider: p%s}\n"
	for _, c := range []struct{ name, keys, want string }{
		{"no agents", "", "agents[1].goal.agents: required for the goal engine"},
		{"unknown agent", ", goal: {agents: [w, nobody]}", `agents[1].goal.agents[1]: unknown agent "nobody" (agents: w, g)`},
		{"itself", ", goal: {agents: [g]}", "agents[1].goal.agents[0]: a goal agent cannot plan work for itself"},
		{"twice", ", goal: {agents: [w, w]}", `agents[1].goal.agents[1]: "w" is listed twice`},
		{"approval", ", goal: {agents: [w], approval: maybe}", `agents[1].goal.approval: "maybe": want required or none`},
		{"retries", ", goal: {agents: [w], max_retries: -1}", "agents[1].goal.max_retries: must not be negative"},
		{"tools", ", tools: [clock], goal: {agents: [w]}", "agents[1]: the goal engine takes no tools"},
		{"no provider", ", goal: {agents: [w]}", "agents[1].provider: required for the goal engine"},
		{"settings elsewhere", ", goal: {agents: [w]}", "agents[0].goal: only the goal engine has goal settings"},
		{"unknown key", ", goal: {agents: [w], agnets: [w]}", "agnets"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(base, "%s", c.keys, 1)
			switch c.name {
			case "no provider":
				doc = strings.Replace(doc, "engine: goal, provider: p", "engine: goal", 1)
			case "settings elsewhere":
				doc = strings.Replace(doc, "engine: loop, provider: p}", "engine: loop, provider: p, goal: {agents: [g]}}", 1)
			}
			cfg, err := Parse([]byte(doc), "test")
			if err == nil {
				_, err = cfg.Build(BuildOptions{Getenv: func(string) string { return "" }})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
	ok := strings.Replace(base, "%s", ", goal: {agents: [w], approval: none, max_retries: 0}", 1)
	cfg, err := Parse([]byte(ok), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Build(BuildOptions{Getenv: func(string) string { return "" }}); err != nil {
		t.Fatal(err)
	}
}
