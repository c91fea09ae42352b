package engine_test

import (
	"testing"

	"agentd/internal/engine"
)

func TestParseStepActor(t *testing.T) {
	tests := []struct{ actor, agent, node string }{
		{"echo", "echo", ""},
		{engine.NodeActor("planner", "fetch"), "planner", "fetch"},
		{engine.IterActor("loop", 3), "loop", ""},
		{"graph.node.n1.iter2", "graph", "n1"},
		{"agent.iterator", "agent.iterator", ""},
		{"a.iter2x", "a.iter2x", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		agent, node := engine.ParseStepActor(tt.actor)
		if agent != tt.agent || node != tt.node {
			t.Errorf("ParseStepActor(%q) = %q, %q; want %q, %q", tt.actor, agent, node, tt.agent, tt.node)
		}
	}
}
