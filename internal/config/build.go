package config

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/engine/conformance"
	"agentd/internal/engine/flow"
	"agentd/internal/engine/graph"
	"agentd/internal/engine/loop"
	"agentd/internal/llm"
	"agentd/internal/llm/openai"
	"agentd/internal/llm/scripted"
	"agentd/internal/runtime"
	"agentd/internal/tool"
)

// Env reads environment variables; os.Getenv by default, a map in tests.
type Env func(string) string

// BuildOptions tune Build.
type BuildOptions struct {
	// Getenv reads secrets and switches (default os.Getenv).
	Getenv Env
	// Now is the clock of the built-in clock tool (default time.Now).
	Now func() time.Time
	// SelfURL returns the server's own base URL ("http://127.0.0.1:8080")
	// once it listens; remote agents resolve a peer given as a path
	// against it.
	SelfURL func() string
	// Memory backs the memory tools of agents with a memory section
	// (memory.go); nil refuses such agents.
	Memory tool.Memory
}

// Build turns the configuration into the runtime's agents: providers are
// constructed (secrets read from the environment), tools registered and
// engines built.
func (c *Config) Build(opts BuildOptions) ([]*runtime.Agent, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	b := &builder{c: c, opts: opts, reg: &tool.Registry{MaxResultBytes: c.Tools.MaxResultBytes}, providers: map[string]llm.Provider{},
		built:     make(map[string]engine.Engine, len(c.Agents)),
		openaiEnv: opts.Getenv("OPENAI_BASE_URL") != "" || opts.Getenv("OPENAI_API_KEY") != ""}
	if err := tool.RegisterBuiltins(b.reg, c.builtinOptions(opts.Now)); err != nil {
		return nil, err
	}
	if err := registerDemoTools(b.reg, opts.Getenv); err != nil {
		return nil, err
	}
	if err := c.registerHTTPTools(b.reg); err != nil {
		return nil, err
	}
	out := make([]*runtime.Agent, 0, len(c.Agents))
	for i, a := range c.Agents {
		eng, err := b.engine(i, a)
		if err != nil {
			return nil, err
		}
		b.built[a.ID] = eng
		ra := runtimeAgent(a, eng)
		ra.Configure = b.configurer(a)
		if err := b.revise(fmt.Sprintf("agents[%d]", i), a, ra); err != nil {
			return nil, err
		}
		out = append(out, ra)
	}
	if err := b.handoffs(out); err != nil {
		return nil, err
	}
	return out, nil
}

// builder holds what building the agents of one configuration shares.
type builder struct {
	c         *Config
	opts      BuildOptions
	reg       *tool.Registry
	providers map[string]llm.Provider // built once each
	// built holds the engines built so far, for graph steps on agent:<id>.
	built     map[string]engine.Engine
	openaiEnv bool // OPENAI_BASE_URL or OPENAI_API_KEY is set
	// peerTools are the peer tools registered so far, by name
	// (federation.go).
	peerTools map[string]PeerTool
	// configuring serialises the assistants' builds (assistant.go).
	configuring sync.Mutex
}

// provider builds (once) the provider name.
func (b *builder) provider(name string) (llm.Provider, error) {
	if p, ok := b.providers[name]; ok {
		return p, nil
	}
	p, err := buildProvider(name, b.c.Providers[name], b.opts.Getenv)
	if err != nil {
		return nil, err
	}
	b.providers[name] = p
	return p, nil
}

// providerName is the provider agent a uses: its openai_provider when the
// environment configures an OpenAI-compatible endpoint.
func (b *builder) providerName(a Agent) string {
	if b.openaiEnv && a.OpenAIProvider != "" {
		return a.OpenAIProvider
	}
	return a.Provider
}

// engine builds the engine of agent a, the i-th.
func (b *builder) engine(i int, a Agent) (engine.Engine, error) {
	path := fmt.Sprintf("agents[%d]", i)
	switch a.Engine {
	case "loop":
		return b.loop(path, a)
	case "flow":
		if err := b.flowTools(path, a); err != nil {
			return nil, err
		}
		eng, err := flow.New(flow.Config{Flow: b.c.flows[i], Tools: b.reg, AgentID: a.ID, SpecVersion: a.Version,
			Effects: b.c.effectOverrides(), InDoubt: b.c.inDoubt(a, b.reg.Names())})
		if err != nil {
			return nil, fmt.Errorf("%s.flow: %w", path, err)
		}
		return eng, nil
	case "graph":
		agents := &workflowAgents{c: b.c, self: a, provider: b.provider, defaultProvider: b.providerName(a),
			registry: b.reg, built: b.built, tools: func() (*tool.Registry, error) { return b.reg.Clone(), nil }}
		eng, err := graph.New(graph.Config{Workflow: b.c.workflows[i], AgentID: a.ID, SpecVersion: a.Version, Agents: agents, SharedMemory: a.SharedMemory,
			Messaging: a.Messaging, Coordinator: a.Coordinator.graph(), MailboxSize: a.MailboxSize})
		if err != nil {
			return nil, fmt.Errorf("%s.workflow: %w", path, err)
		}
		return eng, nil
	case "goal":
		return b.goal(path, a)
	case "remote":
		return b.c.buildRemote(path, a, b.opts.Getenv, b.opts.SelfURL)
	case "conformance":
		return conformance.New(a.ID), nil
	}
	return nil, fmt.Errorf("%s.engine: unknown engine %q", path, a.Engine)
}

// loop builds a loop agent's engine.
func (b *builder) loop(path string, a Agent) (engine.Engine, error) {
	name := b.providerName(a)
	p, err := b.provider(name)
	if err != nil {
		return nil, fmt.Errorf("%s.provider: %w", path, err)
	}
	// The agent's model, else its provider's; OPENAI_MODEL overrides both
	// for an OpenAI-compatible provider. A scripted provider ignores the
	// name but reports it (trajectories, prices).
	model := cmp.Or(a.Model, b.c.Providers[name].Model)
	if b.c.Providers[name].Type == "openai" {
		model = cmp.Or(b.opts.Getenv("OPENAI_MODEL"), model)
	}
	guards, err := a.guards(path)
	if err != nil {
		return nil, err
	}
	cs := contextSettings(a, b.c.Providers[name], model)
	names, err := b.federationTools(path, a)
	if err != nil {
		return nil, err
	}
	if names, err = b.mcpTools(path, a, names); err != nil {
		return nil, err
	}
	choice, err := llm.ParseToolChoice(a.ToolChoice, names)
	if err != nil {
		return nil, fmt.Errorf("%s.%w", path, err)
	}
	reg, err := b.memoryTools(path, a)
	if err != nil {
		return nil, err
	}
	eng, err := loop.New(loop.Config{
		ToolChoice: choice, ResponseStrict: a.ResponseStrict, SchemaInPrompt: cs.SchemaInPrompt,
		OnLength: a.OnLength, MaxContinuations: a.MaxContinuations,
		ApprovalTools: guards.approvalTools, ApprovalTimeout: time.Duration(a.ApprovalTimeout), Governance: guards.governance,
		Provider: p, Model: model, SystemPrompt: a.SystemPrompt, Tools: reg, ToolNames: names,
		MaxIterations: a.MaxIterations, AgentID: a.ID, SpecVersion: a.Version,
		Temperature: a.Temperature, TopP: a.TopP, MaxTokens: a.MaxTokens,
		TurnTimeout: time.Duration(a.TurnTimeout), DisallowedTools: a.DisallowedTools,
		ResponseSchema: a.ResponseSchema, ResponseRetries: a.ResponseRetries,
		MaxToolCalls:  a.Budget.MaxToolCallsPerRun,
		ContextWindow: cs.ContextWindow, CompactThreshold: cs.CompactThreshold,
		Effects: b.c.effectOverrides(), InDoubt: b.c.inDoubt(a, names),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return eng, nil
}

// runtimeAgent is the runtime's agent a, on eng.
func runtimeAgent(a Agent, eng engine.Engine) *runtime.Agent {
	return &runtime.Agent{
		Agent: agent.Agent{
			ID:    a.ID,
			Tools: slices.DeleteFunc(slices.Clone(a.Tools), func(t string) bool { return slices.Contains(a.DisallowedTools, t) }),
			Card: agent.AgentCard{
				Name: nonEmpty(a.Name, a.ID), Description: a.Description, Version: nonEmpty(a.Version, "1.0.0"),
				Skills:             a.Skills,
				DefaultInputModes:  []string{"text/plain", "application/json"},
				DefaultOutputModes: []string{"text/plain", "application/json"},
				Capabilities:       agent.AgentCapabilities{Streaming: true},
			},
		},
		Engine:                eng,
		EngineKind:            a.Engine,
		Multitask:             runtime.MultitaskPolicy(a.Multitask),
		MaxTokensPerRun:       a.Budget.MaxTokensPerRun,
		MaxCostPerRun:         a.Budget.MaxCostPerRun,
		ChildBudgetShare:      a.Budget.ChildShare,
		MaxTokensTotal:        a.Budget.MaxTokensTotal,
		MaxTokensPerPeriod:    a.Budget.MaxTokensPerPeriod,
		BudgetPeriod:          time.Duration(a.Budget.Period),
		MaxInputTokensPerRun:  a.Budget.MaxInputTokensPerRun,
		MaxOutputTokensPerRun: a.Budget.MaxOutputTokensPerRun,
		MaxWallTime:           time.Duration(a.Budget.MaxWallTime),
		HistoryLimit:          a.HistoryLimit,
		Timeout:               attemptTimeout(a),
		Description:           a.Description,
	}
}

func buildProvider(name string, p Provider, getenv Env) (llm.Provider, error) {
	switch p.Type {
	case "scripted":
		return scripted.New(scripted.Config{Rules: p.Rules})
	case "openai":
		base := p.BaseURL
		if v := getenv("OPENAI_BASE_URL"); v != "" {
			base = v
		}
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		keyEnv := nonEmpty(p.APIKeyEnv, "OPENAI_API_KEY")
		return openai.New(openai.Config{
			BaseURL: base, APIKey: getenv(keyEnv), Model: p.Model,
			IdleTimeout: p.Timeout.Or(60 * time.Second), MaxRetries: p.MaxRetries,
		})
	}
	return nil, fmt.Errorf("provider %q: unknown type %q", name, p.Type)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// builtinOptions configures the built-in tools from the file: http_get is
// registered only when tools.http_get says where it may go.
func (c *Config) builtinOptions(now func() time.Time) tool.BuiltinOptions {
	o := tool.BuiltinOptions{Now: now}
	if h := c.Tools.HTTPGet; h != nil {
		o.HTTPGet = &tool.HTTPGetOptions{
			AllowHosts: h.AllowHosts, MaxBytes: h.MaxBytes, Timeout: time.Duration(h.Timeout), AllowPrivate: h.AllowPrivate,
		}
	}
	return o
}
