package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"agentd/internal/llm/scripted"
	"agentd/internal/tool"
)

// Engines are the engine names an agent may use.
var Engines = []string{"loop", "flow", "graph", "goal", "remote", "conformance"}

// BuiltinTools are the tool names the configuration may reference.
var BuiltinTools = []string{"calculator", "clock"}

// DemoFileTools are the demo tools loop agents may list (the guarded agent's).
var DemoFileTools = []string{tool.DemoDeleteFileName, tool.DemoReadFileName}

var agentIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Validate checks values and references; errors name their path.
func (c *Config) Validate() error {
	if c.Server.PublicURL != "" {
		u, err := url.Parse(c.Server.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("server.public_url: %q is not an absolute http(s) URL", c.Server.PublicURL)
		}
	}
	if err := c.Server.validateOutage(); err != nil {
		return err
	}
	if c.Server.MaxBodyBytes < 0 {
		return fmt.Errorf("server.max_body_bytes: must not be negative, got %d", c.Server.MaxBodyBytes)
	}
	if c.Auth != nil {
		if err := c.Auth.validate(); err != nil {
			return err
		}
	}
	if err := c.Limits.validate(); err != nil {
		return err
	}
	if err := c.validateBounds(); err != nil {
		return err
	}
	if err := validatePrices(c.Prices); err != nil {
		return err
	}
	if err := c.validateEffects(); err != nil {
		return err
	}
	for i, a := range c.Agents {
		if a.Budget.MaxCostPerRun > 0 && len(c.Prices) == 0 {
			return fmt.Errorf("agents[%d].budget.max_cost_per_run: a cost budget needs prices: price the agent's models in the prices section", i)
		}
	}
	for _, name := range sortedProviderNames(c.Providers) {
		p := c.Providers[name]
		path := "providers." + name
		if err := p.validateModels(path); err != nil {
			return err
		}
		switch p.Type {
		case "scripted":
			if len(p.Rules) == 0 {
				return fmt.Errorf("%s.rules: a scripted provider needs at least one rule", path)
			}
			if _, err := scripted.New(scripted.Config{Rules: p.Rules}); err != nil {
				return fmt.Errorf("%s.%v", path, err)
			}
		case "openai":
			if len(p.Rules) > 0 {
				return fmt.Errorf("%s.rules: only scripted providers have rules", path)
			}
			if p.BaseURL != "" {
				if u, err := url.Parse(p.BaseURL); err != nil || u.Host == "" {
					return fmt.Errorf("%s.base_url: %q is not an absolute URL", path, p.BaseURL)
				}
			}
		case "":
			return fmt.Errorf("%s.type: required (scripted or openai)", path)
		default:
			return fmt.Errorf("%s.type: unknown provider type %q (want scripted or openai)", path, p.Type)
		}
	}
	if len(c.Agents) == 0 {
		return fmt.Errorf("agents: at least one agent is required")
	}
	if err := c.Memory.validate(); err != nil { // memory.go
		return err
	}
	seen := map[string]int{}
	for i, a := range c.Agents {
		path := fmt.Sprintf("agents[%d]", i)
		if !agentIDPattern.MatchString(a.ID) {
			return fmt.Errorf("%s.id: %q must be 1-63 lowercase letters, digits, '-' or '_', starting with a letter or digit", path, a.ID)
		}
		if j, dup := seen[a.ID]; dup {
			return fmt.Errorf("%s.id: %q is already used by agents[%d]", path, a.ID, j)
		}
		seen[a.ID] = i
		if err := a.validateMemory(path); err != nil { // memory.go
			return err
		}
		if err := a.validate(path, c.Providers, c.toolNames()); err != nil {
			return err
		}
	}
	if err := c.validateFederation(); err != nil {
		return err
	}
	if err := c.validateGoals(); err != nil {
		return err
	}
	if d := c.Server.DefaultAgent; d != "" {
		if _, ok := seen[d]; !ok {
			return fmt.Errorf("server.default_agent: unknown agent %q (agents: %s)", d, strings.Join(c.agentIDs(), ", "))
		}
	}
	return nil
}

func (a Agent) validate(path string, providers map[string]Provider, tools []string) error {
	switch a.Engine {
	case "loop":
		if a.Provider == "" {
			return fmt.Errorf("%s.provider: required for the loop engine", path)
		}
		for _, ref := range []struct{ key, name string }{{"provider", a.Provider}, {"openai_provider", a.OpenAIProvider}} {
			if ref.name == "" {
				continue
			}
			if _, ok := providers[ref.name]; !ok {
				return fmt.Errorf("%s.%s: unknown provider %q (providers: %s)", path, ref.key, ref.name, strings.Join(sortedProviderNames(providers), ", "))
			}
		}
		if a.MaxIterations < 0 {
			return fmt.Errorf("%s.max_iterations: must not be negative, got %d", path, a.MaxIterations)
		}
		if err := a.validateSampling(path); err != nil {
			return err
		}
		if err := a.validateGuards(path); err != nil {
			return err
		}
		if err := a.validateMCP(path); err != nil {
			return err
		}
	case "flow":
		if a.Flow == "" {
			return fmt.Errorf("%s.flow: required for the flow engine (a directory of node files or a YAML file)", path)
		}
		if a.Provider != "" || len(a.Tools) > 0 {
			return fmt.Errorf("%s: the flow engine takes no provider or tools (its nodes name their tools)", path)
		}
		if err := a.validateMCP(path); err != nil {
			return err
		}
	case "graph":
		if err := a.validateGraph(path, providers); err != nil {
			return err
		}
	case "goal":
		if err := a.validateGoal(path, providers); err != nil {
			return err
		}
	case "remote":
		if err := a.validateRemote(path); err != nil {
			return err
		}
	case "conformance":
		if a.Provider != "" || len(a.Tools) > 0 {
			return fmt.Errorf("%s: the conformance engine takes no provider or tools", path)
		}
	case "":
		return fmt.Errorf("%s.engine: required (%s)", path, strings.Join(Engines, ", "))
	default:
		return fmt.Errorf("%s.engine: unknown engine %q (want %s)", path, a.Engine, strings.Join(Engines, ", "))
	}
	if err := a.validateContext(path); err != nil {
		return err
	}
	if len(a.Workflow) > 0 && a.Engine != "graph" {
		return fmt.Errorf("%s.workflow: only the graph engine runs a workflow (engine is %q)", path, a.Engine)
	}
	if err := a.validateWorkflowTeam(path); err != nil {
		return err
	}
	if (a.Peer != "" || a.Auth != nil) && a.Engine != "remote" {
		return fmt.Errorf("%s.peer: only the remote engine has a peer (engine is %q)", path, a.Engine)
	}
	if a.Flow != "" && a.Engine != "flow" {
		return fmt.Errorf("%s.flow: only the flow engine runs a flow (engine is %q)", path, a.Engine)
	}
	for j, t := range a.Tools {
		if !slices.Contains(tools, t) && !a.hasPeerTool(t) {
			return fmt.Errorf("%s.tools[%d]: unknown tool %q (tools: %s)", path, j, t, strings.Join(tools, ", "))
		}
	}
	for j, t := range a.DisallowedTools {
		if !slices.Contains(tools, t) && !a.isMCPTool(t) {
			return fmt.Errorf("%s.disallowed_tools[%d]: unknown tool %q (tools: %s)", path, j, t, strings.Join(tools, ", "))
		}
	}
	switch a.Multitask {
	case "", "reject", "enqueue", "interrupt":
	default:
		return fmt.Errorf("%s.multitask: unknown policy %q (want reject, enqueue or interrupt)", path, a.Multitask)
	}
	if b := a.Budget; b.MaxInputTokensPerRun < 0 || b.MaxOutputTokensPerRun < 0 || b.MaxToolCallsPerRun < 0 || b.MaxWallTime < 0 {
		return fmt.Errorf("%s.budget: limits must not be negative", path)
	}
	if a.Budget.MaxTokensPerRun < 0 || a.Budget.MaxTokensTotal < 0 || a.Budget.MaxCostPerRun < 0 {
		return fmt.Errorf("%s.budget: limits must not be negative", path)
	}
	if f := a.Budget.ChildShare; f < 0 || f > 1 {
		return fmt.Errorf("%s.budget.child_share: %g is not a part of the budget (want 0 < child_share ≤ 1)", path, f)
	}
	if err := a.Budget.validatePeriod(path + ".budget"); err != nil {
		return err
	}
	if a.Revise != nil {
		if err := a.Revise.validate(path+".revise", providers); err != nil {
			return err
		}
	}
	for j, s := range a.Skills {
		if s.ID == "" || s.Name == "" {
			return fmt.Errorf("%s.skills[%d]: id and name are required", path, j)
		}
		if len(s.Tags) == 0 {
			return fmt.Errorf("%s.skills[%d].tags: at least one tag is required (A2A)", path, j)
		}
	}
	return nil
}

func (c *Config) agentIDs() []string {
	ids := make([]string, len(c.Agents))
	for i, a := range c.Agents {
		ids[i] = a.ID
	}
	return ids
}

func sortedProviderNames(m map[string]Provider) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// validateSampling checks a loop agent's model-turn settings.
func (a Agent) validateSampling(path string) error {
	switch {
	case a.Temperature != nil && (*a.Temperature < 0 || *a.Temperature > 2):
		return fmt.Errorf("%s.temperature: want 0 to 2, got %v", path, *a.Temperature)
	case a.TopP != nil && (*a.TopP <= 0 || *a.TopP > 1):
		return fmt.Errorf("%s.top_p: want more than 0 and at most 1, got %v", path, *a.TopP)
	case a.MaxTokens < 0:
		return fmt.Errorf("%s.max_tokens: must not be negative, got %d", path, a.MaxTokens)
	case a.Timeout < 0:
		return fmt.Errorf("%s.timeout: must not be negative, got %v", path, time.Duration(a.Timeout))
	case a.TurnTimeout < 0:
		return fmt.Errorf("%s.turn_timeout: must not be negative, got %v", path, time.Duration(a.TurnTimeout))
	}
	if a.ResponseRetries < 0 {
		return fmt.Errorf("%s.response_retries: must not be negative, got %d", path, a.ResponseRetries)
	}
	if len(a.ResponseSchema) > 0 {
		if _, err := tool.CompileDocumentSchema(path+".response_schema", a.ResponseSchema); err != nil {
			return err
		}
	}
	for i, name := range a.DisallowedTools {
		if slices.Contains(a.DisallowedTools[:i], name) {
			return fmt.Errorf("%s.disallowed_tools[%d]: %q listed twice", path, i, name)
		}
	}
	return nil
}

// toolNames are the tools agents of c may list: the built-ins, and
// http_get when tools.http_get configures it.
func (c *Config) toolNames() []string {
	names := append(slices.Clone(BuiltinTools), DemoFileTools...)
	if c.Tools.HTTPGet != nil {
		names = append(names, tool.HTTPGetName)
	}
	names = append(names, c.httpToolNames()...)
	// Listed only with the agent's memory section (validateMemory).
	return append(names, tool.MemoryToolNames...)
}

// validatePeriod checks the budget per period: both fields or neither, a
// period of whole seconds, at least a minute.
func (b Budget) validatePeriod(path string) error {
	p := time.Duration(b.Period)
	switch {
	case b.MaxTokensPerPeriod < 0:
		return fmt.Errorf("%s.max_tokens_per_period: %d must not be negative", path, b.MaxTokensPerPeriod)
	case b.MaxTokensPerPeriod > 0 && p == 0:
		return fmt.Errorf("%s.period: required with max_tokens_per_period (e.g. \"24h\")", path)
	case p != 0 && b.MaxTokensPerPeriod == 0:
		return fmt.Errorf("%s.max_tokens_per_period: required with period %v", path, p)
	case p != 0 && (p < time.Minute || p%time.Second != 0):
		return fmt.Errorf("%s.period: %v must be at least 1m and a whole number of seconds", path, p)
	}
	return nil
}
