package config

import (
	"fmt"
	"slices"
	"strings"

	"agentd/internal/engine/graph"
)

// checkWorkflowTools refuses a workflow agent that lists a tool the server
// will not have, so that a configuration that validates also runs: the
// tools agents may list (built-ins, the demo's, http_get when configured),
// the peer tools any agent declares and the tools of any agent's MCP
// servers ("<server>__<tool>"; the server's own list is checked when it
// is connected, at start). submit_result is the engine's own.
func (c *Config) checkWorkflowTools() error {
	for i, a := range c.Agents {
		w := c.workflows[i]
		if w == nil {
			continue
		}
		specs, err := w.AgentSpecs()
		if err != nil {
			return fmt.Errorf("agents[%d].workflow: %w", i, err)
		}
		for _, s := range specs {
			for j, name := range s.Tools {
				if !c.serverHasTool(name) {
					return fmt.Errorf("agents[%d] (%s).workflow.agents.%s.tools[%d]: unknown tool %q (tools: %s, peer tools and MCP tools the configuration declares)",
						i, a.ID, s.Name, j, name, strings.Join(c.toolNames(), ", "))
				}
			}
		}
	}
	return nil
}

// serverHasTool reports whether a tool of that name will be registered.
func (c *Config) serverHasTool(name string) bool {
	if name == graph.SubmitResultTool || slices.Contains(c.toolNames(), name) {
		return true
	}
	return slices.ContainsFunc(c.Agents, func(a Agent) bool { return a.hasPeerTool(name) || a.isMCPTool(name) })
}
