package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate checks flows in both layouts, prints warnings without failing,
// and checks the flows a configuration names.
func TestValidateFlows(t *testing.T) {
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
	demo := filepath.Join("..", "..", "internal", "config", "flows", "refund")
	one := write("one.yaml", "nodes:\n  - id: start\n    content: hi\n  - id: orphan\n    content: alone\n")
	write("broken/start.md", "---\nto: nowhere\n---\nhi\n")
	broken := filepath.Join(dir, "broken")
	cfg := write("agentd.yaml", "agents:\n  - {id: f, engine: flow, flow: broken}\n")

	cases := []struct {
		name  string
		args  []string
		fails bool
		lines []string
	}{
		{"the demo flow", []string{demo}, false, nil},
		{"a warning does not fail", []string{one}, false, []string{one + `: warning: node "orphan": unreachable from "start"`}},
		{"a broken directory", []string{broken}, true, []string{broken + `: node "start": to: unknown target "nowhere"`}},
		{"a configuration's flow", []string{cfg}, true, []string{cfg + `: agents[0].flow: flow broken: node "start": to: unknown target "nowhere"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := validateCommand(c.args, &out)
			if (err != nil) != c.fails {
				t.Fatalf("err %v, want failure %v; output:\n%s", err, c.fails, &out)
			}
			if c.lines == nil && out.Len() > 0 {
				t.Errorf("output for a valid flow: %s", &out)
			}
			for _, want := range c.lines {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, &out)
				}
			}
		})
	}
}
