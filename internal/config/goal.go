package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/engine/goal"
	"agentd/internal/tool"
)

// GoalSettings are a goal agent's (engine: goal): its provider and model
// are the planner's, its system_prompt is added to the planner's
// instructions, and these say what a plan may use and who approves it.
type GoalSettings struct {
	// Agents are the ids of the agents of this file a plan may use, each
	// as a step's agent.
	Agents []string `json:"agents"`
	// Approval is "required" (default: a person approves, edits or
	// rejects each plan before it runs) or "none".
	Approval string `json:"approval,omitempty"`
	// MaxRetries bounds how often an invalid plan goes back to the
	// planner with its problems (default 2; 0: never).
	MaxRetries *int `json:"max_retries,omitempty"`
}

// validateGoal checks a goal agent's own keys; validateGoals checks the
// agents it names.
func (a Agent) validateGoal(path string, providers map[string]Provider) error {
	if a.Provider == "" {
		return fmt.Errorf("%s.provider: required for the goal engine (the planner's model)", path)
	}
	for _, ref := range []struct{ key, name string }{{"provider", a.Provider}, {"openai_provider", a.OpenAIProvider}} {
		if _, ok := providers[ref.name]; ref.name != "" && !ok {
			return fmt.Errorf("%s.%s: unknown provider %q (providers: %s)", path, ref.key, ref.name, strings.Join(sortedProviderNames(providers), ", "))
		}
	}
	if len(a.Tools) > 0 || a.MaxIterations != 0 || len(a.Workflow) > 0 {
		return fmt.Errorf("%s: the goal engine takes no tools, max_iterations or workflow (its plans name the agents that work)", path)
	}
	g := a.Goal
	if g == nil || len(g.Agents) == 0 {
		return fmt.Errorf("%s.goal.agents: required for the goal engine: the agents a plan may use", path)
	}
	if g.Approval != "" && g.Approval != "required" && g.Approval != "none" {
		return fmt.Errorf("%s.goal.approval: %q: want required or none", path, g.Approval)
	}
	if g.MaxRetries != nil && *g.MaxRetries < 0 {
		return fmt.Errorf("%s.goal.max_retries: must not be negative, got %d", path, *g.MaxRetries)
	}
	return nil
}

// validateGoals checks that every goal agent names agents of this file,
// other than itself.
func (c *Config) validateGoals() error {
	ids := c.agentIDs()
	for i, a := range c.Agents {
		if a.Engine != "goal" {
			if a.Goal != nil {
				return fmt.Errorf("agents[%d].goal: only the goal engine has goal settings (engine is %q)", i, a.Engine)
			}
			continue
		}
		for j, id := range a.Goal.Agents {
			path := fmt.Sprintf("agents[%d].goal.agents[%d]", i, j)
			switch {
			case id == a.ID:
				return fmt.Errorf("%s: a goal agent cannot plan work for itself", path)
			case !slices.Contains(ids, id):
				return fmt.Errorf("%s: unknown agent %q (agents: %s)", path, id, strings.Join(ids, ", "))
			case slices.Contains(a.Goal.Agents[:j], id):
				return fmt.Errorf("%s: %q is listed twice", path, id)
			}
		}
	}
	return nil
}

// goal builds a goal agent's engine: the planner on the agent's provider,
// the plan's agents resolved as a graph workflow's "agent:<id>" models.
func (b *builder) goal(path string, a Agent) (engine.Engine, error) {
	name := b.providerName(a)
	p, err := b.provider(name)
	if err != nil {
		return nil, fmt.Errorf("%s.provider: %w", path, err)
	}
	model := cmp.Or(a.Model, b.c.Providers[name].Model)
	if b.c.Providers[name].Type == "openai" {
		model = cmp.Or(b.opts.Getenv("OPENAI_MODEL"), model)
	}
	offered := make([]goal.Agent, len(a.Goal.Agents))
	for i, id := range a.Goal.Agents {
		offered[i] = goal.Agent{ID: id}
		if j := slices.IndexFunc(b.c.Agents, func(x Agent) bool { return x.ID == id }); j >= 0 {
			offered[i].Description = b.c.Agents[j].Description
		}
	}
	retries := 0
	if r := a.Goal.MaxRetries; r != nil {
		retries = *r
		if retries == 0 {
			retries = -1 // never
		}
	}
	steps := &workflowAgents{c: b.c, self: a, provider: b.provider, defaultProvider: name,
		registry: b.reg, built: b.built, tools: func() (*tool.Registry, error) { return b.reg.Clone(), nil }}
	eng, err := goal.New(goal.Config{
		Planner: p, Model: model, Instructions: a.SystemPrompt, Agents: offered, Steps: steps,
		Approval: a.Goal.Approval != "none", MaxRetries: retries, AgentID: a.ID, SpecVersion: a.Version,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return eng, nil
}
