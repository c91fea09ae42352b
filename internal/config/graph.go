package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"agentd/internal/calltree"
	"agentd/internal/engine"
	"agentd/internal/engine/graph"
	"agentd/internal/engine/loop"
	"agentd/internal/llm"
	"agentd/internal/tool"
)

// loadWorkflows loads and checks the workflow of every graph agent:
// `workflow: path` (relative to the configuration file) or the workflow
// itself, inline. Errors name the agent's workflow key and the place in
// the workflow, one line per problem.
func (c *Config) loadWorkflows(dir files) error {
	for i, a := range c.Agents {
		if a.Engine != "graph" {
			continue
		}
		w, err := dir.workflow(a.Workflow)
		if err != nil {
			return fmt.Errorf("agents[%d].workflow: %s", i, indentProblems(fmt.Sprintf("agents[%d].workflow", i), err))
		}
		if err := graph.Supported(w); err != nil {
			return fmt.Errorf("agents[%d].workflow.%w", i, err)
		}
		if c.workflows == nil {
			c.workflows = map[int]*graph.Workflow{}
		}
		c.workflows[i] = w
	}
	return nil
}

func (dir files) workflow(raw json.RawMessage) (*graph.Workflow, error) {
	var p string
	if err := json.Unmarshal(raw, &p); err != nil {
		return graph.ParseIn(raw, dir.base) // inline: a mapping
	}
	if dir.fs != nil {
		b, err := fs.ReadFile(dir.fs, path.Clean(p))
		if err != nil {
			return nil, err
		}
		return graph.ParseIn(b, "")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir.base, p)
	}
	return graph.Load(p)
}

// indentProblems prints a workflow's problems one per line, each under
// the agent's workflow key.
func indentProblems(key string, err error) string {
	var ps graph.Problems
	if !errors.As(err, &ps) || len(ps) == 1 {
		return err.Error()
	}
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n"+key+": ")
}

// workflowAgents resolves the agents of one graph agent's workflow
// (graph.Agents). A workflow agent's model names, in order:
//   - "agent:<id>", a hosted agent of this server, which runs the step
//     with its own engine and tools;
//   - "<provider>" or "<provider>/<model>", a provider of the
//     configuration, as an LLM tool loop;
//   - any other model of the graph agent's own provider (its provider:
//     key, or openai_provider when OPENAI_* is set).
//
// A step without an agent runs on the server's default agent (unless that
// is the workflow itself: then on its provider's default model).
type workflowAgents struct {
	c        *Config
	self     Agent
	provider func(name string) (llm.Provider, error)
	// defaultProvider is the graph agent's provider ("" when it has none).
	defaultProvider string
	// tools copies the server's registry for an agent with a
	// resultSchema, which adds submit_result to its copy.
	tools    func() (*tool.Registry, error)
	registry *tool.Registry
	// built is every hosted agent's engine, by id; Build fills it, and
	// "agent:<id>" steps look their engine up when they run.
	built map[string]engine.Engine
}

var _ graph.Agents = (*workflowAgents)(nil)

// Engine implements graph.Agents.
func (g *workflowAgents) Engine(spec graph.AgentSpec) (engine.Engine, error) {
	model := spec.Model
	if spec.Name == "" && model == "" {
		if id := g.c.defaultAgentID(); id != g.self.ID {
			model = "agent:" + id
		}
	}
	if id, ok := strings.CutPrefix(model, "agent:"); ok {
		return g.hosted(id)
	}
	prov, m := g.defaultProvider, model
	name, rest, _ := strings.Cut(model, "/")
	if _, ok := g.c.Providers[name]; ok && model != "" {
		prov, m = name, rest
	}
	if prov == "" {
		return nil, fmt.Errorf("model %q: no provider of that name, and agents[%s] has no provider: for bare model names", model, g.self.ID)
	}
	p, err := g.provider(prov)
	if err != nil {
		return nil, err
	}
	if m == "" {
		m = g.c.Providers[prov].Model
	}
	reg, names, err := g.toolsFor(spec)
	if err != nil {
		return nil, err
	}
	gd, err := g.guards(names)
	if err != nil {
		return nil, err
	}
	return loop.New(loop.Config{
		ApprovalTools: gd.approvalTools, ApprovalTimeout: time.Duration(g.self.ApprovalTimeout), Governance: gd.governance,
		Provider: p, Model: m, SystemPrompt: spec.Prompt, Tools: reg, ToolNames: names,
		MaxIterations: spec.MaxTurns, Temperature: spec.Temperature, TopP: spec.TopP, AgentID: nonEmpty(spec.Name, "default"),
	})
}

// guards are the graph agent's tool_settings and governance, which guard
// the tools of every agent of its workflow as they guard a hosted loop
// agent's: approvals apply to those of names the agent has.
func (g *workflowAgents) guards(names []string) (guards, error) {
	gd, err := g.self.guards("agents[" + g.self.ID + "]")
	if err != nil {
		return gd, err
	}
	gd.approvalTools = slices.DeleteFunc(gd.approvalTools, func(t string) bool { return !slices.Contains(names, t) })
	return gd, nil
}

// hosted runs a step on the hosted agent id.
func (g *workflowAgents) hosted(id string) (engine.Engine, error) {
	if id == g.self.ID {
		return nil, fmt.Errorf("model %q: a workflow cannot run its own agent", "agent:"+id)
	}
	if !slices.ContainsFunc(g.c.Agents, func(a Agent) bool { return a.ID == id }) {
		return nil, fmt.Errorf("model %q: unknown agent %q (agents: %s)", "agent:"+id, id, strings.Join(g.c.agentIDs(), ", "))
	}
	return engine.EngineFunc(func(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (*engine.Board, error) {
		eng := g.built[id]
		if eng == nil {
			return board, fmt.Errorf("agent %q is not built", id)
		}
		ctx, err := calltree.Enter(ctx, id)
		if err != nil {
			return board, err
		}
		return eng.Execute(ctx, run, host, board)
	}), nil
}

// toolsFor is the registry and allow-list of a workflow agent: its tools
// minus its disallowedTools, and submit_result when it has a
// resultSchema.
func (g *workflowAgents) toolsFor(spec graph.AgentSpec) (*tool.Registry, []string, error) {
	var names []string
	for _, t := range spec.Tools {
		if !slices.Contains(spec.DisallowedTools, t) {
			names = append(names, t)
		}
	}
	if len(spec.ResultSchema) == 0 && len(spec.WorkflowTools) == 0 {
		return g.registry, names, nil
	}
	reg, err := g.tools()
	if err != nil {
		return nil, nil, err
	}
	reg, names, err = withWorkflowTools(reg, names, spec.WorkflowTools)
	if err != nil || len(spec.ResultSchema) == 0 {
		return reg, names, err
	}
	submit := tool.New(tool.Spec{
		Name:        graph.SubmitResultTool,
		Description: "Submit your structured result. Call it once, with arguments matching the schema.",
		Parameters:  bytes.Clone(spec.ResultSchema),
	}, func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Text(`{"status": "ok"}`), nil
	})
	if err := reg.Register(submit); err != nil {
		return nil, nil, err
	}
	return reg, append(names, graph.SubmitResultTool), nil
}

// defaultAgentID is the agent served by default.
func (c *Config) defaultAgentID() string {
	if c.Server.DefaultAgent != "" {
		return c.Server.DefaultAgent
	}
	if len(c.Agents) > 0 {
		return c.Agents[0].ID
	}
	return ""
}

// validateGraph checks a graph agent's keys; its workflow is checked by
// loadWorkflows.
func (a Agent) validateGraph(path string, providers map[string]Provider) error {
	if len(a.Workflow) == 0 {
		return fmt.Errorf("%s.workflow: required for the graph engine (a workflow file, or the workflow inline)", path)
	}
	if len(a.Tools) > 0 || a.SystemPrompt != "" || a.MaxIterations != 0 {
		return fmt.Errorf("%s: the graph engine takes no tools, system_prompt or max_iterations (its workflow's agents declare them)", path)
	}
	for _, name := range sortedKeys(a.ToolSettings) {
		if s := a.ToolSettings[name].Approval; s != "" && s != "none" && s != "required" {
			return fmt.Errorf("%s.tool_settings.%s.approval: %q: want required or none", path, name, s)
		}
	}
	if _, err := a.guards(path); err != nil {
		return err
	}
	for _, ref := range []struct{ key, name string }{{"provider", a.Provider}, {"openai_provider", a.OpenAIProvider}} {
		if _, ok := providers[ref.name]; ref.name != "" && !ok {
			return fmt.Errorf("%s.%s: unknown provider %q (providers: %s)", path, ref.key, ref.name, strings.Join(sortedProviderNames(providers), ", "))
		}
	}
	return nil
}
