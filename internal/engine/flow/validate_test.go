package flow_test

import (
	"os"
	"strings"
	"testing"

	"agentd/internal/engine/flow"
)

// Each file under testdata/invalid holds one mistake; Load or Compile
// reports it naming the node and the key.
func TestCompileReportsMistakes(t *testing.T) {
	tests := []struct {
		file    string
		want    string
		warning bool
	}{
		{"unknown-target", `node "start": to: unknown target "nowhere"`, false},
		{"do-and-wait", `node "start": do: a node cannot both act (do) and wait for input`, false},
		{"bad-cel", `node "start": transitions[0].condition: "input == = 'x'" is not a valid CEL expression`, false},
		{"bad-template", `node "start": content: template:`, false},
		{"bad-args-template", `node "start": do.args: who: template:`, false},
		{"unknown-tool", `node "start": do.name: unknown tool "pingg"`, false},
		{"no-entry", `nodes: no entry node "start"`, false},
		{"endless", `node "start": no path from here reaches an end`, false},
		{"unreachable", `warning: node "orphan": unreachable from "start"`, true},
		{"no-fallback", `warning: node "start": transitions: no fallback`, true},
		{"bad-input-type", `node "start": input_type: unknown input type "date"`, false},
		{"choice-without-options", `node "start": input_options: a choice needs options`, false},
		{"bad-timeout", `node "start": timeout: "soon" is not a positive duration`, false},
		{"reserved-save-to", `node "start": save_to: "sys.ans" is reserved`, false},
		{"undo-without-do", `node "start": undo: an undo compensates a do`, false},
		{"unknown-key", `nodes[0].too: unknown field`, false},
		{"bad-schema", `node "start": context_schema.age: unknown type number`, false},
		{"denied-on-text", `node "start": on_denied: only a confirm input can be denied`, false},
		{"tool-type-without-do", `node "start": type: type tool needs a do`, false},
		{"bad-default", `node "start": input_default: "many" is not a whole number`, false},
	}
	reg := registry(t, &effects{})
	known := func(n string) bool { _, ok := reg.Get(n); return ok }
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			spec, err := flow.Load(os.DirFS("testdata/invalid"), tc.file+".yaml")
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Load: %v, want %q", err, tc.want)
				}
				return
			}
			f, problems := flow.Compile(spec, known)
			var found *flow.Problem
			for i, p := range problems {
				if strings.Contains(p.String(), tc.want) {
					found = &problems[i]
				}
			}
			if found == nil {
				t.Fatalf("problems %q lack %q", problems, tc.want)
			}
			if found.Warning != tc.warning {
				t.Errorf("%q: warning = %v, want %v", found, found.Warning, tc.warning)
			}
			if (f == nil) != !tc.warning || (problems.Err("x") == nil) != tc.warning {
				t.Errorf("flow %v, Err %v: an error must refuse the flow, a warning must not", f != nil, problems.Err("x"))
			}
		})
	}
}

// The fixtures written after Trellis's examples, the demo's flow and the
// one-file layout compile without a problem.
func TestFixturesCompileClean(t *testing.T) {
	reg := registry(t, &effects{})
	known := func(n string) bool { _, ok := reg.Get(n); return ok }
	for _, name := range []string{"confirm", "defaults", "booking", "signals", "single.yaml", "contract.yaml"} {
		spec, err := flow.Load(os.DirFS("testdata"), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, problems := flow.Compile(spec, known); len(problems) > 0 {
			t.Errorf("%s: %q", name, problems)
		}
	}
}

// Both layouts load to the same node syntax: Markdown bodies become
// content, file names ids, and the one-file layout keeps its context.
func TestLoadLayouts(t *testing.T) {
	dir, err := flow.Load(os.DirFS("testdata"), "booking")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range dir.Nodes {
		ids = append(ids, n.ID)
	}
	if strings.Join(ids, ",") != "01_hotel,02_flight,03_car,start" {
		t.Errorf("ids %q", ids)
	}
	if n := dir.Nodes[0]; n.Content != "Reserving a hotel in Paris..." || n.Do.Name != "reserve_hotel" || n.Undo.Args["id"] != "{{ .hotel.id }}" {
		t.Errorf("01_hotel = %+v", n)
	}
	one, err := flow.Load(os.DirFS("testdata"), "single.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if one.Name != "greeter" || one.Context["greeting"] != "Hello" || len(one.Nodes) != 6 {
		t.Errorf("single.yaml = %+v", one)
	}
	if _, err := flow.Load(os.DirFS("testdata"), "missing"); err == nil {
		t.Error("a missing flow loaded")
	}
}
