package config

import (
	"fmt"

	"agentd/internal/calltree"
	"slices"
	"strings"
)

// CallTreeLimits are the runtime's bounds on a request's call tree, from
// server.max_call_depth and server.max_fan_out (0: calltree's defaults).
func (c *Config) CallTreeLimits() calltree.Limits {
	return calltree.Limits{MaxDepth: c.Server.MaxCallDepth, MaxFanOut: c.Server.MaxFanOut}
}

// A configuration whose agents call each other in a cycle — a workflow
// whose step runs agent:b while b's workflow runs agent:a, a hand-off or a
// peer tool back to an agent on the way — would make one request start
// runs until the call-tree depth limit stops it. Such cycles, visible in
// the file, are refused by validate and at load. (Those a run builds at
// run time are stopped by the runtime's call-tree guard.)

// callEdge is one way agent from may call agent to.
type callEdge struct {
	to  string
	via string // "workflow step agent:b", "hand-off", "peer tool ask_b"
}

// callGraph lists, by agent id, the agents of this file each agent may
// call.
func (c *Config) callGraph() (map[string][]callEdge, error) {
	g := map[string][]callEdge{}
	local := func(ref string) (string, bool) {
		if slices.Contains(c.agentIDs(), ref) {
			return ref, true
		}
		if rest, ok := strings.CutPrefix(ref, "/agents/"); ok {
			id, _, _ := strings.Cut(rest, "/")
			return id, slices.Contains(c.agentIDs(), id)
		}
		return "", false
	}
	for i, a := range c.Agents {
		if w := c.workflows[i]; w != nil {
			specs, err := w.AgentSpecs()
			if err != nil {
				return nil, fmt.Errorf("agents[%d].workflow: %w", i, err)
			}
			for _, s := range specs {
				if id, ok := c.hostedAgentOf(a.ID, s.Name, s.Model); ok {
					g[a.ID] = append(g[a.ID], callEdge{to: id, via: "workflow step agent:" + id})
				}
			}
		}
		if a.Engine == "goal" && a.Goal != nil {
			for _, id := range a.Goal.Agents {
				g[a.ID] = append(g[a.ID], callEdge{to: id, via: "goal plan step agent:" + id})
			}
		}
		for _, h := range a.Handoffs {
			if id, ok := local(h.Target); ok {
				g[a.ID] = append(g[a.ID], callEdge{to: id, via: "hand-off to " + id})
			}
		}
		for _, p := range a.PeerTools {
			if id, ok := local(p.Card); ok {
				g[a.ID] = append(g[a.ID], callEdge{to: id, via: "peer tool " + p.Name})
			}
		}
		if id, ok := local(a.Peer); ok && a.Engine == "remote" {
			g[a.ID] = append(g[a.ID], callEdge{to: id, via: "remote peer " + id})
		}
	}
	return g, nil
}

// hostedAgentOf is the hosted agent a workflow step of agent self runs
// with workflow agent name and model: "agent:<id>", or the default agent
// for a step that names neither (workflowAgents.Engine).
func (c *Config) hostedAgentOf(self, name, model string) (string, bool) {
	if name == "" && model == "" {
		if id := c.defaultAgentID(); id != self {
			return id, true
		}
		return "", false
	}
	id, ok := strings.CutPrefix(model, "agent:")
	return id, ok
}

// validateBounds checks the bounds on a request's call tree and on tool
// results.
func (c *Config) validateBounds() error {
	switch {
	case c.Tools.MaxResultBytes < 0:
		return fmt.Errorf("tools.max_result_bytes: %d must not be negative", c.Tools.MaxResultBytes)
	case c.Server.MaxCallDepth < 0:
		return fmt.Errorf("server.max_call_depth: %d must not be negative", c.Server.MaxCallDepth)
	case c.Server.MaxFanOut < 0:
		return fmt.Errorf("server.max_fan_out: %d must not be negative", c.Server.MaxFanOut)
	}
	return nil
}

// checkCallCycles refuses a configuration whose agents call each other in
// a cycle, naming it: "a → b (workflow step agent:b) → a (…)".
func (c *Config) checkCallCycles() error {
	g, err := c.callGraph()
	if err != nil {
		return err
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var vias []string
	var visit func(id string) error
	visit = func(id string) error {
		state[id] = onPath
		path = append(path, id)
		for _, e := range g[id] {
			vias = append(vias, e.via)
			switch state[e.to] {
			case onPath:
				return cycleError(path, vias, e.to)
			case unseen:
				if err := visit(e.to); err != nil {
					return err
				}
			}
			vias = vias[:len(vias)-1]
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	for i, a := range c.Agents {
		if state[a.ID] != unseen {
			continue
		}
		if err := visit(a.ID); err != nil {
			return fmt.Errorf("agents[%d] (%s): %w", i, a.ID, err)
		}
	}
	return nil
}

// cycleError names the cycle that closes at agent to: the agents on path
// from to's first appearance, each with the call that leads on.
func cycleError(path, vias []string, to string) error {
	start := slices.Index(path, to)
	var b strings.Builder
	b.WriteString(to)
	for j := start; j < len(path); j++ {
		next := to
		if j+1 < len(path) {
			next = path[j+1]
		}
		fmt.Fprintf(&b, " → %s (%s)", next, vias[j])
	}
	return fmt.Errorf("call cycle %s: one request would start runs until the call-tree depth limit; break the cycle", b.String())
}
