package graph

import "agentd/internal/engine"

// AgentSpecs lists every (agent, model) pair the workflow's steps, judges
// and included workflows run, each once, as Agents.Engine would be asked
// for them: the server reads them to find the hosted agents a workflow
// calls ("agent:<id>") before any run, and refuses a configuration whose
// workflows call each other in a cycle.
func (w *Workflow) AgentSpecs() ([]AgentSpec, error) {
	var out []AgentSpec
	_, err := resolveAgents(w, AgentsFunc(func(s AgentSpec) (engine.Engine, error) {
		out = append(out, s)
		return nil, nil
	}), nil)
	return out, err
}
