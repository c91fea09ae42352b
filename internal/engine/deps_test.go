package engine_test

import (
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

type depKey string

func TestDependencies(t *testing.T) {
	var nilDeps *engine.Dependencies
	if nilDeps.Has("x") || nilDeps.Clone() != nil {
		t.Errorf("nil container is not empty")
	}
	nilDeps.Remove("x") // must not panic

	d := &engine.Dependencies{}
	d.Set(depKey("llm"), "provider")
	d.Set("tools", 42)
	c := d.Clone()
	c.Set("extra", true)
	d.Remove("tools")

	if d.Has("extra") {
		t.Errorf("clone wrote through to its base")
	}
	if !c.Has("tools") {
		t.Errorf("removal in base reached the clone")
	}
	if v, ok := d.Get(depKey("llm")); !ok || v != "provider" {
		t.Errorf("Get = %v, %v", v, ok)
	}
	if d.Has("llm") {
		t.Errorf("a string key matched a typed key")
	}
}

func TestGetDep(t *testing.T) {
	d := &engine.Dependencies{} // the zero value is usable
	d.Set("n", 7)
	if n, err := engine.GetDep[int](d, "n"); err != nil || n != 7 {
		t.Errorf("GetDep[int] = %v, %v", n, err)
	}
	if _, err := engine.GetDep[string](d, "n"); !errdefs.IsValidation(err) {
		t.Errorf("wrong type: %v, want Validation", err)
	}
	if _, err := engine.GetDep[int](nil, "n"); !errdefs.IsNotFound(err) {
		t.Errorf("nil container: %v, want NotFound", err)
	}
}
