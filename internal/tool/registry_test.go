package tool_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// echo returns a tool that answers with its raw arguments.
func echo(name, schema string, flags tool.Flags) tool.Tool {
	return tool.New(tool.Spec{Name: name, Description: "echo " + name, Parameters: json.RawMessage(schema), Flags: flags},
		func(_ context.Context, args json.RawMessage) (tool.Result, error) {
			return tool.Text(string(args)), nil
		})
}

func TestRegisterNames(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"clock", true},
		{"get_weather-v2", true},
		{"A", true},
		{strings.Repeat("x", 64), true},
		{"", false},
		{strings.Repeat("x", 65), false},
		{"has space", false},
		{"dotted.name", false},
		{"slash/name", false},
		{"ünïcode", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reg tool.Registry
			err := reg.Register(echo(tt.name, "", tool.Flags{}))
			if tt.ok && err != nil {
				t.Fatalf("Register(%q) = %v, want ok", tt.name, err)
			}
			if !tt.ok {
				if !errdefs.IsValidation(err) {
					t.Fatalf("Register(%q) = %v, want a validation error", tt.name, err)
				}
				if !strings.Contains(err.Error(), `"`+tt.name+`"`) {
					t.Errorf("error %q does not name the tool", err)
				}
			}
		})
	}
}

func TestRegisterRejects(t *testing.T) {
	tests := []struct {
		label  string
		schema string
		flags  tool.Flags
		want   string
	}{
		{"schema not JSON", `{"type":`, tool.Flags{}, "schema is not valid JSON"},
		{"schema not object", `[1]`, tool.Flags{}, "schema must be a JSON object"},
		{"schema for a string", `{"type":"string"}`, tool.Flags{}, `"type" must be "object"`},
		{"invalid keyword value", `{"type":"object","properties":{"a":{"type":"nonsense"}}}`, tool.Flags{}, "invalid schema"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, tool.Flags{}, "remote and file references are disabled"},
		{"file ref", `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`, tool.Flags{}, "remote and file references are disabled"},
		{"bad approval", "", tool.Flags{Approval: "maybe"}, `approval "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			var reg tool.Registry
			err := reg.Register(echo("t1", tt.schema, tt.flags))
			if !errdefs.IsValidation(err) {
				t.Fatalf("Register = %v, want a validation error", err)
			}
			if !strings.Contains(err.Error(), `tool "t1"`) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to name the tool and contain %q", err, tt.want)
			}
			if _, ok := reg.Get("t1"); ok {
				t.Error("rejected tool was registered")
			}
		})
	}
}

func TestRegisterDuplicate(t *testing.T) {
	var reg tool.Registry
	if err := reg.Register(echo("dup", "", tool.Flags{})); err != nil {
		t.Fatal(err)
	}
	err := reg.Register(echo("dup", "", tool.Flags{}))
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), `tool "dup": already registered`) {
		t.Fatalf("second Register = %v, want already registered", err)
	}
	if err := reg.Register(nil); !errdefs.IsValidation(err) {
		t.Fatalf("Register(nil) = %v, want a validation error", err)
	}
}

func TestLocalRefsCompile(t *testing.T) {
	var reg tool.Registry
	draft7 := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"}}}`
	if err := reg.Register(echo("draft7", draft7, tool.Flags{})); err != nil {
		t.Fatalf("Register with a draft-07 $schema (embedded meta-schema): %v", err)
	}
	schema := `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`
	if err := reg.Register(echo("local", schema, tool.Flags{})); err != nil {
		t.Fatalf("Register with a local $ref: %v", err)
	}
	res := reg.Execute(context.Background(), tool.Call{Name: "local", Arguments: json.RawMessage(`{"a":"x"}`)})
	if !res.IsError || res.Content != "local: argument /a: got string, want integer" {
		t.Fatalf("result = %+v", res)
	}
}

func TestNamesGetSpecs(t *testing.T) {
	var reg tool.Registry
	for _, n := range []string{"zeta", "alpha", "mid"} {
		if err := reg.Register(echo(n, "", tool.Flags{ParallelSafe: n == "mid"})); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := reg.Names(), []string{"alpha", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if tl, ok := reg.Get("mid"); !ok || tl.Name() != "mid" {
		t.Errorf("Get(mid) = %v, %v", tl, ok)
	}
	if _, ok := reg.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}

	all, err := reg.Specs()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Name != "alpha" || all[2].Name != "zeta" {
		t.Errorf("Specs() = %+v, want all three sorted", all)
	}
	if string(all[0].Parameters) != `{"type":"object","properties":{}}` || all[0].Description != "echo alpha" {
		t.Errorf("spec of a tool without schema = %+v", all[0])
	}

	some, err := reg.Specs("zeta", "mid")
	if err != nil {
		t.Fatal(err)
	}
	if len(some) != 2 || some[0].Name != "zeta" || !some[1].Flags.ParallelSafe {
		t.Errorf("Specs(zeta, mid) = %+v, want them in that order with flags", some)
	}

	_, err = reg.Specs("alpha", "clok")
	if !errdefs.IsNotFound(err) || err.Error() != `unknown tool "clok" (available: alpha, mid, zeta)` {
		t.Errorf("Specs(clok) = %v", err)
	}
	if _, err := reg.Specs("mid", "mid"); !errdefs.IsValidation(err) {
		t.Errorf("Specs(mid, mid) = %v, want a validation error", err)
	}
}

func TestSpecJSON(t *testing.T) {
	reg := builtins(t)
	specs, err := reg.Specs(tool.ClockName)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(specs[0])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["name"] != "clock" || got["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("spec JSON = %s", b)
	}
	if got["flags"].(map[string]any)["parallel_safe"] != true {
		t.Errorf("spec flags = %s", b)
	}
}

func TestFlags(t *testing.T) {
	if (tool.Flags{}).RequiresApproval() || (tool.Flags{Approval: tool.ApprovalNone}).RequiresApproval() {
		t.Error("no approval policy requires approval")
	}
	if !(tool.Flags{Approval: tool.ApprovalRequired}).RequiresApproval() {
		t.Error(`approval "required" does not require approval`)
	}
}
