package graph

import (
	"testing"

	"agentd/internal/engine"
)

func TestShapeIsTheDAG(t *testing.T) {
	cond := "steps.a.status == 'completed'"
	e := &Engine{wf: &Workflow{Steps: []*Step{
		{ID: "a"},
		{ID: "b", DependsOn: []string{"a"}},
		{ID: "c", DependsOn: []string{"a"}, Condition: &cond},
		{ID: "d", DependsOn: []string{"b", "c"}},
	}}}
	s, ok := engine.ShapeOf(e)
	if !ok {
		t.Fatal("the graph engine does not draw itself")
	}
	want := []engine.ShapeEdge{
		{From: "__start__", To: "a"}, {From: "a", To: "b"}, {From: "a", To: "c", Conditional: true},
		{From: "b", To: "d"}, {From: "c", To: "d"}, {From: "d", To: "__end__"},
	}
	if len(s.Edges) != len(want) {
		t.Fatalf("edges %+v, want %+v", s.Edges, want)
	}
	for i := range want {
		if s.Edges[i] != want[i] {
			t.Fatalf("edge %d: %+v, want %+v", i, s.Edges[i], want[i])
		}
	}
	if len(s.Nodes) != 6 || s.Nodes[0].ID != "__start__" || s.Nodes[5].ID != "__end__" {
		t.Fatalf("nodes %+v", s.Nodes)
	}
}
