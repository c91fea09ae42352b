package config

import (
	"fmt"
	"os"
	"slices"
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
}

// Build turns the configuration into the runtime's agents: providers are
// constructed (secrets read from the environment), tools registered and
// engines built.
func (c *Config) Build(opts BuildOptions) ([]*runtime.Agent, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	reg := &tool.Registry{}
	if err := tool.RegisterBuiltins(reg, c.builtinOptions(opts.Now)); err != nil {
		return nil, err
	}
	if err := registerDemoTools(reg, getenv); err != nil {
		return nil, err
	}
	providers := map[string]llm.Provider{}
	provider := func(name string) (llm.Provider, error) {
		if p, ok := providers[name]; ok {
			return p, nil
		}
		p, err := buildProvider(name, c.Providers[name], getenv)
		if err != nil {
			return nil, err
		}
		providers[name] = p
		return p, nil
	}
	openaiEnv := getenv("OPENAI_BASE_URL") != "" || getenv("OPENAI_API_KEY") != ""
	out := make([]*runtime.Agent, 0, len(c.Agents))
	built := make(map[string]engine.Engine, len(c.Agents)) // for graph steps on agent:<id>
	for i, a := range c.Agents {
		path := fmt.Sprintf("agents[%d]", i)
		var eng engine.Engine
		switch a.Engine {
		case "loop":
			name := a.Provider
			if openaiEnv && a.OpenAIProvider != "" {
				name = a.OpenAIProvider
			}
			p, err := provider(name)
			if err != nil {
				return nil, fmt.Errorf("%s.provider: %w", path, err)
			}
			model := a.Model
			if c.Providers[name].Type == "openai" {
				if m := getenv("OPENAI_MODEL"); m != "" {
					model = m
				} else if model == "" {
					model = c.Providers[name].Model
				}
			}
			eng, err = loop.New(loop.Config{
				Provider: p, Model: model, SystemPrompt: a.SystemPrompt, Tools: reg, ToolNames: a.Tools,
				MaxIterations: a.MaxIterations, AgentID: a.ID, SpecVersion: a.Version,
				Temperature: a.Temperature, TopP: a.TopP, MaxTokens: a.MaxTokens,
				TurnTimeout: time.Duration(a.TurnTimeout), DisallowedTools: a.DisallowedTools,
				ResponseSchema: a.ResponseSchema, ResponseRetries: a.ResponseRetries,
				MaxToolCalls: a.Budget.MaxToolCallsPerRun,
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		case "flow":
			var err error
			eng, err = flow.New(flow.Config{Flow: c.flows[i], Tools: reg, AgentID: a.ID, SpecVersion: a.Version})
			if err != nil {
				return nil, fmt.Errorf("%s.flow: %w", path, err)
			}
		case "graph":
			defaultProvider := a.Provider
			if openaiEnv && a.OpenAIProvider != "" {
				defaultProvider = a.OpenAIProvider
			}
			var err error
			eng, err = graph.New(graph.Config{Workflow: c.workflows[i], AgentID: a.ID, SpecVersion: a.Version,
				Agents: &workflowAgents{c: c, self: a, provider: provider, defaultProvider: defaultProvider, registry: reg, built: built,
					tools: func() (*tool.Registry, error) {
						r := &tool.Registry{}
						return r, tool.RegisterBuiltins(r, c.builtinOptions(opts.Now))
					}}})
			if err != nil {
				return nil, fmt.Errorf("%s.workflow: %w", path, err)
			}
		case "remote":
			var err error
			eng, err = c.buildRemote(path, a, getenv, opts.SelfURL)
			if err != nil {
				return nil, err
			}
		case "conformance":
			eng = conformance.New(a.ID)
		}
		built[a.ID] = eng
		out = append(out, &runtime.Agent{
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
			Multitask:             runtime.MultitaskPolicy(a.Multitask),
			MaxTokensPerRun:       a.Budget.MaxTokensPerRun,
			MaxTokensTotal:        a.Budget.MaxTokensTotal,
			MaxInputTokensPerRun:  a.Budget.MaxInputTokensPerRun,
			MaxOutputTokensPerRun: a.Budget.MaxOutputTokensPerRun,
			MaxWallTime:           time.Duration(a.Budget.MaxWallTime),
			HistoryLimit:          a.HistoryLimit,
			Timeout:               time.Duration(a.Timeout),
			Description:           a.Description,
		})
	}
	return out, nil
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
