package config

import (
	"fmt"

	"agentd/internal/engine/graph"
	"agentd/internal/tool"
)

// withWorkflowTools adds the graph engine's workflow tools that names
// lists (shared memory, messaging) to reg, a copy of the server's
// registry, and to the agent's allow-list.
func withWorkflowTools(reg *tool.Registry, allowed, names []string) (*tool.Registry, []string, error) {
	for _, name := range names {
		t := graph.Tool(name)
		if t == nil {
			return nil, nil, fmt.Errorf("workflow tool %q: unknown", name)
		}
		if err := reg.Register(t); err != nil {
			return nil, nil, err
		}
		allowed = append(allowed, name)
	}
	return reg, allowed, nil
}

// validateWorkflowTeam refuses the workflow keys on an agent that runs no
// workflow.
func (a Agent) validateWorkflowTeam(path string) error {
	if a.SharedMemory && a.Engine != "graph" {
		return fmt.Errorf("%s.shared_memory: only the graph engine's workflow steps share a memory (engine is %q)", path, a.Engine)
	}
	return nil
}
