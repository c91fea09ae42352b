package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/model"
	"agentd/internal/runtime"
)

func demoAgent(t *testing.T, id string) *runtime.Agent {
	t.Helper()
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := c.Build(BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("no demo agent %q", id)
	return nil
}

// The research demo runs on the scripted model: the step events follow
// the DAG (golden sequence of step starts and ends), and the answer is
// the published report.
func TestResearchDemo(t *testing.T) {
	a := demoAgent(t, "research")
	h := enginetest.NewRecordingHost()
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "quantum computing"))
	out, err := a.Engine.Execute(t.Context(), engine.Run{ID: "demo"}, h, b)
	if err != nil {
		t.Fatal(err)
	}
	msgs := out.Channel(engine.MainChannel)
	if got := msgs[len(msgs)-1].Text(); got != "Final report on quantum computing: history, technology and impact, one example each (approved by review)." {
		t.Errorf("answer %q", got)
	}
	var seq []string
	for _, ev := range h.Events() {
		var s string
		switch e := ev.(type) {
		case engine.StepStarted:
			s = e.Actor + ".start"
		case engine.StepCompleted:
			s = e.Actor + ".complete"
		case engine.StepFailed:
			s = e.Actor + ".error"
		}
		s, ok := strings.CutPrefix(s, "research.node.")
		if !ok || strings.Contains(s, "/") {
			continue // not a workflow step's own event
		}
		seq = append(seq, s)
	}
	parallel := map[string]bool{"history.start": true, "technology.start": true, "impact.start": true,
		"history.complete": true, "technology.complete": true, "impact.complete": true}
	var golden []string
	for _, s := range seq {
		if parallel[s] {
			s = "<angle>." + strings.SplitN(s, ".", 2)[1]
		}
		golden = append(golden, s)
	}
	want := "plan.start plan.complete <angle>.start <angle>.start <angle>.start <angle>.complete <angle>.complete <angle>.complete " +
		"write.start write.complete review.start review#0.start review#0.complete review#1.start review#1.complete review.complete " +
		"publish.start publish.complete"
	if got := strings.Join(golden, " "); got != want {
		t.Errorf("step events:\n got %s\nwant %s", got, want)
	}
}

func TestGraphAgentConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wf.yaml"), []byte("name: w\nsteps:\n  - {id: a, dependsOn: [reserch]}\n  - {id: research}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "providers:\n  p: {type: scripted, rules: [{reply: hi}]}\nagents:\n  - {id: g, engine: graph, provider: p, workflow: %s}\n"
	cases := []struct{ name, workflow, want string }{
		{"file with a typo", "wf.yaml", `agents[0].workflow: steps[0].dependsOn[0]: unknown step "reserch" (did you mean "research"?)`},
		{"missing file", "nope.yaml", "agents[0].workflow: open " + filepath.Join(dir, "nope.yaml")},
		{"inline", "{name: x, steps: [{id: a, timeout: 5}]}", "agents[0].workflow: steps[0].timeout"},
		{"no workflow", "", "agents[0].workflow: required for the graph engine"},
		{"unknown hosted agent", "{name: x, agents: {w: {description: d, model: 'agent:nobody'}}, steps: [{id: a, agent: w}]}",
			`agents[0].workflow: graph workflow "x": steps[0]: agent "w": model "agent:nobody": unknown agent "nobody"`},
		{"a coordinator on a hosted agent", "{name: x, steps: [{id: a}]}, coordinator: {model: 'agent:echo'}",
			`agents[0].coordinator.model: "agent:echo": the coordinator runs on a provider's model`},
		{"a negative mailbox", "{name: x, steps: [{id: a}]}, mailbox_size: -1", `agents[0].mailbox_size: -1`},
		{"isolation it cannot honour", "{name: x, steps: [{id: a}], options: {isolation: worktree-per-step}}",
			`agents[0].workflow.options.isolation: "worktree-per-step" is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(base, "%s", c.workflow, 1)
			if c.workflow == "" {
				doc = strings.Replace(base, ", workflow: %s", "", 1)
			}
			path := filepath.Join(dir, "agentd.yaml")
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if err == nil {
				_, err = cfg.Build(BuildOptions{Getenv: func(string) string { return "" }})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
}
