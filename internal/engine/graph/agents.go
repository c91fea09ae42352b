package graph

import (
	"encoding/json"
	"fmt"

	"agentd/internal/engine"
)

// Agents is what the engine needs from its host to run a step: the engine
// that executes one workflow agent with one model. The server wires an
// implementation that resolves a model "agent:<id>" to a hosted agent's
// engine, "provider" or "provider/model" to an LLM tool loop on that
// provider, and anything else to a model of the default provider (see
// internal/config). The engine calls Engine once per distinct (agent,
// model) pair, in New, so wiring mistakes surface before any run.
type Agents interface {
	// Engine returns the engine that runs spec's steps. spec.Name is ""
	// for steps without an agent: they run on the server's default agent.
	Engine(spec AgentSpec) (engine.Engine, error)
}

// AgentsFunc adapts a function to Agents.
type AgentsFunc func(spec AgentSpec) (engine.Engine, error)

// Engine calls f.
func (f AgentsFunc) Engine(spec AgentSpec) (engine.Engine, error) { return f(spec) }

// AgentSpec is a workflow agent as a step runs it: the document's
// definition with its @ prompt read and the step's model override
// applied.
type AgentSpec struct {
	// Name is the key in the workflow's agents; "" for the default agent.
	Name            string
	Description     string
	Prompt          string
	Model           string
	Tools           []string
	DisallowedTools []string
	// MaxTurns is the agent's bound on model turns (DefaultMaxTurns when
	// the document leaves it 0).
	MaxTurns    int
	Temperature *float64
	TopP        *float64
	// ResultSchema, when set, asks for a SubmitResultTool the agent calls
	// with its structured result (spec §4).
	ResultSchema json.RawMessage
	// WorkflowTools names the workflow tools (Tool) the agent gets besides
	// its own: the shared memory tools when the Config enables them.
	WorkflowTools []string
}

// SubmitResultTool is the tool an agent with a resultSchema calls to hand
// in its structured result. The engine reads the call's arguments from
// the step's transcript and validates them against the schema; the
// Agents implementation offers the tool (parameters = the schema) and
// answers {"status":"ok"}.
const SubmitResultTool = "submit_result"

// key identifies one resolved (agent, model) pair.
type agentKey struct{ name, model string }

// spec returns the AgentSpec of agent name in w with model override.
func (w *Workflow) agentSpec(name, model string) AgentSpec {
	a := w.Agents[name]
	if a == nil {
		return AgentSpec{Model: model, MaxTurns: DefaultMaxTurns}
	}
	s := AgentSpec{
		Name: name, Description: a.Description, Prompt: a.prompt, Model: a.Model,
		Tools: a.Tools, DisallowedTools: a.DisallowedTools, MaxTurns: a.MaxTurns,
		Temperature: a.Temperature, TopP: a.TopP, ResultSchema: a.ResultSchema,
	}
	if model != "" {
		s.Model = model
	}
	if s.MaxTurns == 0 {
		s.MaxTurns = DefaultMaxTurns
	}
	return s
}

// resolveAgents builds the engine of every (agent, model) pair the
// workflow's steps, judges and sub-workflows use.
func resolveAgents(w *Workflow, agents Agents, workflowTools []string) (map[agentKey]engine.Engine, error) {
	out := map[agentKey]engine.Engine{}
	var walk func(w *Workflow, path string, steps []*Step) error
	use := func(w *Workflow, path, name, model string) error {
		k := agentKey{name, model}
		if _, ok := out[k]; ok {
			return nil
		}
		spec := w.agentSpec(name, model)
		spec.WorkflowTools = workflowTools
		eng, err := agents.Engine(spec)
		if err != nil {
			who := "the default agent"
			if name != "" {
				who = fmt.Sprintf("agent %q", name)
			}
			return fmt.Errorf("%s: %s: %w", path, who, err)
		}
		out[k] = eng
		return nil
	}
	walk = func(w *Workflow, path string, steps []*Step) error {
		for i, s := range steps {
			p := index(path, "steps", i)
			switch {
			case s.Include != "":
				if s.sub == nil {
					return fmt.Errorf("%s.include: %q is not loaded (load the workflow with graph.Load)", p, s.Include)
				}
				if err := walk(s.sub, p+".include("+s.Include+")", s.sub.Steps); err != nil {
					return err
				}
				continue
			case s.Loop != nil && len(s.Loop.Steps) > 0:
				if err := walk(w, p+".loop", s.Loop.Steps); err != nil {
					return err
				}
			default:
				if err := use(w, p, s.Agent, s.Model); err != nil {
					return err
				}
			}
			if s.Loop != nil && s.Loop.UntilAgent != "" {
				if err := use(w, p+".loop.untilAgent", s.Loop.UntilAgent, ""); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(w, "", w.Steps); err != nil {
		return nil, err
	}
	return out, nil
}
