package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every reference workflow of the spec loads, file references and
// includes resolved.
func TestExamplesLoad(t *testing.T) {
	files, _ := filepath.Glob("testdata/examples/*.yaml")
	json, _ := filepath.Glob("testdata/examples/*.json")
	files = append(files, json...)
	if len(files) < 19 {
		t.Fatalf("found %d examples, want the spec's 19", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			w, err := Load(f)
			if err != nil {
				t.Fatalf("Load:\n%v", err)
			}
			if len(w.Steps) == 0 {
				t.Fatal("no steps")
			}
		})
	}
}

func TestLoadResolvesReferences(t *testing.T) {
	w, err := Load("testdata/examples/include-reuse.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sub := w.Steps[2].sub
	if sub == nil || sub.Name != "deploy-sub-workflow" || len(sub.Steps) != 2 {
		t.Fatalf("include not loaded: %+v", sub)
	}
	if w.Agents["deploy-agent"] == nil {
		t.Errorf("the sub-workflow's agents are not merged: %v", w.Agents)
	}
	w, err = Load("testdata/examples/full-featured.yaml")
	if err != nil {
		t.Fatal(err)
	}
	planner := w.Agents["planner"]
	if planner == nil || !strings.Contains(planner.prompt, "plan") || strings.HasPrefix(planner.prompt, "@") {
		t.Errorf("@ prompt not read: %+v", planner)
	}
}

func TestLoadReportsBrokenReferences(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("sub/other.yaml", "name: other\nagents:\n  w: {description: different}\nsteps:\n  - id: x\n    agent: w\n    dependsOn: [zz]\n")
	write("self.yaml", "name: self\nsteps:\n  - id: again\n    include: self.yaml\n")
	main := write("main.yaml", `name: main
agents:
  w: {description: writer, prompt: "@prompts/missing.md"}
includes:
  other: sub/other.yaml
steps:
  - id: a
    agent: w
    instructions: "@nowhere.md"
    contextFiles: [docs/none.txt]
  - id: b
    include: other
  - id: c
    include: absent.yaml
  - id: d
    include: self.yaml
`)
	_, err := Load(main)
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("Load accepted broken references: %v", err)
	}
	for _, want := range []string{
		"agents.w.prompt: open " + filepath.Join(dir, "prompts/missing.md"),
		"steps[0].instructions: open " + filepath.Join(dir, "nowhere.md"),
		"steps[1].include(sub/other.yaml).steps[0].dependsOn[0]: unknown step \"zz\"",
		"steps[2].include(absent.yaml): open",
		"includes nest more than 5 deep",
	} {
		if !strings.Contains(ps.Error(), want) {
			t.Errorf("problems lack %q:\n%v", want, ps)
		}
	}
}

// TestMissingContextFileWarnsThenFailsItsStep: zenflow's spec reads
// contextFiles when their step runs (its case step-contextfiles is valid
// though the files do not exist), so Load only warns of a missing one; the
// step that reads it fails naming the file as the workflow does, while it
// is missing, and runs once it exists.
func TestMissingContextFileWarnsThenFailsItsStep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "review.yaml")
	doc := "name: review\nsteps:\n  - id: review\n    instructions: Review it\n    contextFiles: [docs/standards.md]\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Load(path)
	if err != nil {
		t.Fatalf("Load refused a workflow whose context file does not exist yet: %v", err)
	}
	if ws := w.Warnings(); len(ws) != 1 || ws[0].Path != "steps[0].contextFiles[0]" || !strings.Contains(ws[0].Message, `"docs/standards.md" does not exist`) {
		t.Fatalf("warnings %v, want one for steps[0].contextFiles[0]", ws)
	}
	agents := newFakeAgents(nil)
	e, err := New(Config{Workflow: w, Agents: agents, AgentID: "wf", RetryBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = execute(t, e, "please")
	if err == nil || !strings.Contains(err.Error(), `step "review": context file "docs/standards.md" does not exist`) || strings.Contains(err.Error(), dir) {
		t.Fatalf("run with the file missing: %v, want the step failed naming the file (and not the server's directory)", err)
	}
	if _, called := agents.callOf("review"); called {
		t.Error("the step's agent ran without its context file")
	}

	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "standards.md"), []byte("Use tabs."), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := execute(t, e, "please"); err != nil {
		t.Fatalf("run once the file exists: %v", err)
	}
	if c, ok := agents.callOf("review"); !ok || !strings.Contains(c.Prompt, "## Context file standards.md\nUse tabs.") {
		t.Errorf("prompt %q lacks the context file", c.Prompt)
	}
}
