package config

import (
	"fmt"
	"strings"

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
	if a.Engine != "graph" {
		for _, k := range []struct {
			key string
			set bool
		}{{"shared_memory", a.SharedMemory}, {"messaging", a.Messaging}, {"coordinator", a.Coordinator != nil}, {"mailbox_size", a.MailboxSize != 0}} {
			if k.set {
				return fmt.Errorf("%s.%s: only a graph agent's workflow has it (engine is %q)", path, k.key, a.Engine)
			}
		}
		return nil
	}
	if a.MailboxSize < 0 {
		return fmt.Errorf("%s.mailbox_size: %d; want a positive bound (0: the default, %d)", path, a.MailboxSize, graph.DefaultMailboxSize)
	}
	if c := a.Coordinator; c != nil && c.MaxTurns < 0 {
		return fmt.Errorf("%s.coordinator.max_turns: %d; want a positive bound (0: the default, %d)", path, c.MaxTurns, graph.DefaultCoordinatorTurns)
	}
	if c := a.Coordinator; c != nil && strings.HasPrefix(c.Model, "agent:") {
		// A hosted agent runs with its own tools, not the coordinator's.
		return fmt.Errorf("%s.coordinator.model: %q: the coordinator runs on a provider's model (\"<provider>/<model>\" or a model of the agent's provider), which gets its tools; a hosted agent would not", path, c.Model)
	}
	return nil
}

// WorkflowCoordinator is a graph agent's coordinator: an agent that runs
// beside its workflow's steps, messages them, reads their messages and
// ends with a summary (graph.CoordinatorConfig). Its model is named as a
// workflow agent's is (a model of the graph agent's provider,
// "<provider>/<model>" or "agent:<id>").
type WorkflowCoordinator struct {
	Model    string `json:"model,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	MaxTurns int    `json:"max_turns,omitempty"`
}

func (c *WorkflowCoordinator) graph() *graph.CoordinatorConfig {
	if c == nil {
		return nil
	}
	return &graph.CoordinatorConfig{Model: c.Model, Prompt: c.Prompt, MaxTurns: c.MaxTurns}
}
