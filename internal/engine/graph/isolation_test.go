package graph

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"agentd/internal/errdefs"
)

// options.isolation: a document zenflow accepts loads whatever its
// isolation (the spec leaves the value to the consumer), but an engine is
// built only for the one agentd honours.
func TestIsolationIsHonouredOrRefused(t *testing.T) {
	cases := []struct {
		file, wantErr string
	}{
		{"isolation-none.yaml", ""},
		{"isolation-worktree.yaml", `graph workflow "options-worktree": options.isolation: "worktree-per-step" is not supported`},
		{"../examples/full-featured.yaml", `options.isolation: "worktree-per-step" is not supported`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			w, err := Load(filepath.Join("testdata", "caps", c.file))
			if err != nil {
				t.Fatalf("Load: the spec accepts the document: %v", err)
			}
			_, err = New(Config{Workflow: w, Agents: newFakeAgents(nil)})
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case c.wantErr != "" && (!errdefs.IsValidation(err) || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("New: %v, want a validation error containing %q", err, c.wantErr)
			}
		})
	}
}

// big answers size bytes of text naming the step.
func big(size int) behaviour {
	return func(_ context.Context, c call) (string, error) {
		return c.Step + ":" + strings.Repeat("x", size), nil
	}
}

func TestDependencyOutputIsCapped(t *testing.T) {
	t.Run("a dependency's content is cut to MaxDependencyBytes", func(t *testing.T) {
		agents := newFakeAgents(map[string]behaviour{"w": big(40 * 1024)})
		e := newTestEngine(t, `{name: cap, agents: {w: {description: writes a lot}}, steps: [{id: a, agent: w}, {id: b, dependsOn: [a], instructions: Read}]}`, agents)
		if _, _, err := execute(t, e, "go"); err != nil {
			t.Fatal(err)
		}
		c, _ := agents.callOf("b")
		section := c.Prompt[strings.Index(c.Prompt, "## Output of step a\n")+len("## Output of step a\n"):]
		if len(section) > MaxDependencyBytes || !strings.HasSuffix(section, truncationMarker) || !strings.HasPrefix(section, "a:xxx") {
			t.Errorf("dependency section of %d bytes (ends with the marker: %v), want at most %d with the marker",
				len(section), strings.HasSuffix(section, truncationMarker), MaxDependencyBytes)
		}
	})
	t.Run("the whole prompt is cut to MaxPromptBytes", func(t *testing.T) {
		agents := newFakeAgents(map[string]behaviour{"w": big(15 * 1024)})
		var steps, deps []string
		for i := range 10 {
			id := "s" + strconv.Itoa(i)
			steps, deps = append(steps, `{id: `+id+`, agent: w}`), append(deps, id)
		}
		doc := `{name: wide, agents: {w: {description: writes}}, steps: [` + strings.Join(steps, ", ") +
			`, {id: sum, dependsOn: [` + strings.Join(deps, ", ") + `], instructions: Sum}]}`
		if _, _, err := execute(t, newTestEngine(t, doc, agents), "go"); err != nil {
			t.Fatal(err)
		}
		c, _ := agents.callOf("sum")
		if len(c.Prompt) > MaxPromptBytes || !strings.HasSuffix(c.Prompt, truncationMarker) {
			t.Errorf("prompt of %d bytes, want at most %d ending with the marker", len(c.Prompt), MaxPromptBytes)
		}
	})
	t.Run("a cumulative loop's history reaches its dependent whole", func(t *testing.T) {
		w, err := Load(filepath.Join("testdata", "caps", "debate-cumulative.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		agents := newFakeAgents(map[string]behaviour{"pro": big(12 * 1024), "con": big(12 * 1024), "judge": judgeAfter(3)})
		e, err := New(Config{Workflow: w, Agents: agents})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := execute(t, e, "debate"); err != nil {
			t.Fatal(err)
		}
		c, _ := agents.callOf("verdict")
		for _, round := range []string{"rounds#0.con-argue:", "rounds#2.con-argue:"} {
			if !strings.Contains(c.Prompt, round) {
				t.Errorf("verdict's prompt (%d bytes) lacks %q", len(c.Prompt), round)
			}
		}
		if strings.Contains(c.Prompt, truncationMarker) {
			t.Error("the cumulative history was truncated")
		}
	})
}
