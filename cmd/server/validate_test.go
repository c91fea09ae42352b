package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "name: ok\nsteps:\n  - id: a\n  - id: b\n    dependsOn: [a]\n")
	bad := write("bad.json", `{"name": "bad", "steps": [{"id": "a", "dependsOn": ["reserch"]}, {"id": "b", "timeout": "5"}]}`)
	other := write("other.yaml", "hello: world\n")
	// zenflow's own valid case step-contextfiles: its files are read when
	// the step runs.
	contextFiles := write("context.yaml", "name: context-aware-review\nagents:\n  reviewer:\n    description: Reviews code\n"+
		"steps:\n  - id: review\n    agent: reviewer\n    contextFiles: [docs/coding-standards.md, .golangci.yml]\n")
	spec := filepath.Join("..", "..", "internal", "engine", "graph", "testdata", "examples", "include-reuse.yaml")

	cases := []struct {
		name  string
		args  []string
		fails bool
		lines []string
	}{
		{"valid files", []string{good, spec}, false, nil},
		{"one line per problem", []string{good, bad}, true, []string{
			bad + `: steps[0].dependsOn[0]: unknown step "reserch"`,
			bad + ": steps[1].timeout: not a duration",
		}},
		{"unknown kind", []string{other}, true, []string{other + ": not a workflow"}},
		{"context files missing until run time warn", []string{contextFiles}, false, []string{
			contextFiles + `: warning: steps[0].contextFiles[0]: "docs/coding-standards.md" does not exist (yet)`,
			contextFiles + `: warning: steps[0].contextFiles[1]: ".golangci.yml" does not exist (yet)`,
		}},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, true, []string{"nope.yaml: stat"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := validateCommand(c.args, &out)
			if (err != nil) != c.fails {
				t.Fatalf("err %v, want failure %v; output:\n%s", err, c.fails, &out)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if c.lines == nil && out.Len() > 0 {
				t.Errorf("output for valid files: %s", &out)
			}
			if c.lines != nil && len(lines) != len(c.lines) {
				t.Errorf("%d lines, want %d:\n%s", len(lines), len(c.lines), &out)
			}
			for _, want := range c.lines {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, &out)
				}
			}
		})
	}
	if err := validateCommand(nil, &bytes.Buffer{}); !errors.Is(err, errUsage) {
		t.Errorf("validate without files: %v, want a usage error", err)
	}
}
