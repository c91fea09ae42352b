package flow_test

import (
	"testing"

	"agentd/internal/engine"
)

// TestShapeDrawsTheNodes: the confirm flow is drawn from its entry node
// through both answers of its question to the two ends.
func TestShapeDrawsTheNodes(t *testing.T) {
	reg := registry(t, &effects{})
	s, ok := engine.ShapeOf(newEngine(t, compile(t, "confirm", reg), reg))
	if !ok {
		t.Fatal("the flow engine does not draw itself")
	}
	has := func(from, to string) bool {
		for _, e := range s.Edges {
			if e.From == from && e.To == to {
				return true
			}
		}
		return false
	}
	for _, e := range [][2]string{{"__start__", "start"}, {"start", "accepted"}, {"start", "refused"}, {"accepted", "__end__"}, {"refused", "__end__"}} {
		if !has(e[0], e[1]) {
			t.Errorf("no edge %s → %s in %+v", e[0], e[1], s.Edges)
		}
	}
	if s.Nodes[0].ID != "__start__" || s.Nodes[len(s.Nodes)-1].ID != "__end__" || len(s.Nodes) != 5 {
		t.Errorf("nodes %+v", s.Nodes)
	}
}
