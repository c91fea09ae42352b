package tool_test

import (
	"testing"

	"agentd/internal/tool"
)

// A clone holds the original's tools; what is added to it stays in it.
func TestClone(t *testing.T) {
	var r tool.Registry
	if err := tool.RegisterBuiltins(&r, tool.BuiltinOptions{}); err != nil {
		t.Fatal(err)
	}
	c := r.Clone()
	if err := c.Register(tool.New(tool.Spec{Name: "submit_result"}, nil)); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(tool.CalculatorName); !ok {
		t.Error("the clone lacks the original's calculator")
	}
	if _, ok := r.Get("submit_result"); ok {
		t.Error("a tool added to the clone reached the original")
	}
}
