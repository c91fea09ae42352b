package config

import (
	"strings"
	"testing"
)

// The workflow keys on an agent that runs no workflow are refused, not
// ignored.
func TestWorkflowKeysOnlyOnGraphAgents(t *testing.T) {
	for _, key := range []string{"shared_memory: true", "messaging: true", "coordinator: {}", "mailbox_size: 4"} {
		t.Run(key, func(t *testing.T) {
			_, err := Parse([]byte("providers:\n  p: {type: scripted, rules: [{reply: hi}]}\nagents:\n  - {id: a, engine: loop, provider: p, "+key+"}\n"), "agentd.yaml")
			name, _, _ := strings.Cut(key, ":")
			if err == nil || !strings.Contains(err.Error(), "agents[0]."+name+": only a graph agent's workflow has it") {
				t.Fatalf("got %v", err)
			}
		})
	}
}
