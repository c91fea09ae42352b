package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/mcptool"
	"agentd/internal/tool"
)

// HTTPTool declares an HTTP tool (tools.http[]): a call sends its
// arguments as JSON to URL with the call's effect key as Idempotency-Key.
type HTTPTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Method is POST (default), PUT, PATCH, DELETE or GET.
	Method string `json:"method,omitempty"`
	URL    string `json:"url"`
	// Parameters is the JSON Schema of the arguments (default: an object).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Effects: none, idempotent, keyed (the service does the effect once
	// per Idempotency-Key) or unsafe (default for any method but GET).
	Effects tool.Effects `json:"effects,omitempty"`
	// InDoubt is the policy for a call found in doubt: retry, reconcile,
	// ask or fail (default: by effects).
	InDoubt string `json:"in_doubt,omitempty"`
	// StatusURL is the reconcile call: a GET, "{key}" replaced by the
	// effect key; 2xx says the effect happened (the body is its result),
	// 404 that it did not.
	StatusURL    string   `json:"status_url,omitempty"`
	Timeout      Duration `json:"timeout,omitempty"`
	AllowPrivate bool     `json:"allow_private,omitempty"`
}

// EffectSettings overrides a tool's declared effects and its doubt policy
// (tools.effects.<tool name>), for any tool: built-in, MCP, peer, HTTP.
type EffectSettings struct {
	Effects tool.Effects `json:"effects,omitempty"`
	InDoubt string       `json:"in_doubt,omitempty"`
	// StatusTool is an MCP tool's reconcile call: another tool of the same
	// server ("<server>__<tool>"), called with {"idempotency_key": key}; a
	// result means the effect happened, an error result that it did not.
	StatusTool string `json:"status_tool,omitempty"`
}

// httpToolNames are the names tools.http declares.
func (c *Config) httpToolNames() []string {
	names := make([]string, len(c.Tools.HTTP))
	for i, h := range c.Tools.HTTP {
		names[i] = h.Name
	}
	return names
}

// validateEffects checks tools.http, tools.effects and each agent's
// in_doubt, naming the field at fault.
func (c *Config) validateEffects() error {
	for i, h := range c.Tools.HTTP {
		path := fmt.Sprintf("tools.http[%d]", i)
		if slices.Contains(c.httpToolNames()[:i], h.Name) || slices.Contains(BuiltinTools, h.Name) {
			return fmt.Errorf("%s.name: %q is taken", path, h.Name)
		}
		if _, err := h.build(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := checkPolicy(path+".in_doubt", h.InDoubt, h.StatusURL != ""); err != nil {
			return err
		}
	}
	for name, s := range c.Tools.Effects {
		path := "tools.effects." + name
		if err := s.Effects.Validate(); err != nil {
			return fmt.Errorf("%s.effects: %w", path, err)
		}
		if err := checkPolicy(path+".in_doubt", s.InDoubt, true); err != nil {
			return err
		}
		server, _, ok := strings.Cut(name, mcptool.Separator)
		if st := s.StatusTool; st != "" && (!ok || !strings.HasPrefix(st, server+mcptool.Separator)) {
			return fmt.Errorf("%s.status_tool: %q: an MCP tool's status tool is another tool of its server (%q…)", path, st, server+mcptool.Separator)
		}
	}
	for i, a := range c.Agents {
		for name, p := range a.InDoubt {
			if err := checkPolicy(fmt.Sprintf("agents[%d].in_doubt.%s", i, name), p, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPolicy refuses an unknown policy, and reconcile without a status
// call when the tool is known to have none.
func checkPolicy(path, p string, reconciles bool) error {
	switch p {
	case "", engine.DoubtRetry, engine.DoubtAsk, engine.DoubtFail:
		return nil
	case engine.DoubtReconcile:
		if reconciles {
			return nil
		}
		return fmt.Errorf("%s: reconcile needs a status_url", path)
	}
	return fmt.Errorf("%s: %q: want retry, reconcile, ask or fail", path, p)
}

// build is h's tool.
func (h HTTPTool) build() (tool.Tool, error) {
	return tool.NewHTTPTool(tool.HTTPToolOptions{
		Name: h.Name, Description: h.Description, Method: h.Method, URL: h.URL, Schema: h.Parameters,
		Effects: h.Effects, StatusURL: h.StatusURL, Timeout: time.Duration(h.Timeout), AllowPrivate: h.AllowPrivate,
	})
}

// registerHTTPTools registers tools.http in reg.
func (c *Config) registerHTTPTools(reg *tool.Registry) error {
	for i, h := range c.Tools.HTTP {
		t, err := h.build()
		if err == nil {
			err = reg.Register(t)
		}
		if err != nil {
			return fmt.Errorf("tools.http[%d]: %w", i, err)
		}
	}
	return nil
}

// effectOverrides are the effect kinds tools.effects sets, by tool.
func (c *Config) effectOverrides() map[string]tool.Effects {
	out := map[string]tool.Effects{}
	for name, s := range c.Tools.Effects {
		if s.Effects != "" {
			out[name] = s.Effects
		}
	}
	return out
}

// inDoubt is agent a's doubt policy by tool: the agent's own entry for the
// tool, else its "*", else the tool's (tools.http[].in_doubt,
// tools.effects), else unset (the loop's default by effect kind).
func (c *Config) inDoubt(a Agent, names []string) map[string]string {
	out := map[string]string{}
	own := map[string]string{}
	for _, h := range c.Tools.HTTP {
		own[h.Name] = h.InDoubt
	}
	for name, s := range c.Tools.Effects {
		if s.InDoubt != "" {
			own[name] = s.InDoubt
		}
	}
	for _, name := range names {
		switch {
		case a.InDoubt[name] != "":
			out[name] = a.InDoubt[name]
		case a.InDoubt["*"] != "":
			out[name] = a.InDoubt["*"]
		case own[name] != "":
			out[name] = own[name]
		}
	}
	return out
}

// setStatusTools gives server's tools the status tools tools.effects names.
func (c *Config) setStatusTools(server string, conn *mcptool.Conn) error {
	for name, s := range c.Tools.Effects {
		if s.StatusTool == "" || !strings.HasPrefix(name, server+mcptool.Separator) {
			continue
		}
		if err := conn.SetStatusTool(name, s.StatusTool); err != nil {
			return fmt.Errorf("tools.effects.%s.status_tool: %w", name, err)
		}
	}
	return nil
}
