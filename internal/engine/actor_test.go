package engine_test

import (
	"testing"

	"agentd/internal/engine"
)

func TestParseStepActor(t *testing.T) {
	tests := []struct{ actor, agent, node string }{
		{"echo", "echo", ""},
		{engine.NodeActor("planner", "fetch"), "planner", "fetch"},
		{"wf.node.b/flaky", "wf", "b/flaky"},
		{"agent.iterator", "agent.iterator", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		agent, node := engine.ParseStepActor(tt.actor)
		if agent != tt.agent || node != tt.node {
			t.Errorf("ParseStepActor(%q) = %q, %q; want %q, %q", tt.actor, agent, node, tt.agent, tt.node)
		}
	}
}
