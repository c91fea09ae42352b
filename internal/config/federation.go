package config

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/engine/remote"
	"agentd/internal/runtime"
)

// toolNamePattern is the tool-name rule of model APIs (tool.Registry's).
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// PeerTool declares a peer A2A agent that a loop agent calls as a tool
// (tool kind a2a_peer): the model's message goes to the peer, the peer's
// final answer is the tool's result.
type PeerTool struct {
	// Name is the tool's name, as the model sees it.
	Name string `json:"name"`
	// Card is the URL of the peer's agent card, or a path on this server.
	Card string `json:"card"`
	// Description tells the model when to call the peer.
	Description string `json:"description,omitempty"`
	// Auth is the credentials for the peer, from the environment.
	Auth *PeerAuth `json:"auth,omitempty"`
}

// validateFederation checks the agents' peer tools and hand-offs: only
// loop agents have them, a peer tool has a name and a card URL, a
// hand-off names another agent of the file or a peer card URL.
func (c *Config) validateFederation() error {
	for i, a := range c.Agents {
		path := fmt.Sprintf("agents[%d]", i)
		if len(a.PeerTools) > 0 && a.Engine != "loop" && a.Engine != "flow" {
			return fmt.Errorf("%s: only loop and flow agents have peer_tools (engine is %q)", path, a.Engine)
		}
		if len(a.Handoffs) > 0 && a.Engine != "loop" {
			return fmt.Errorf("%s: only loop agents have handoffs (engine is %q)", path, a.Engine)
		}
		for j, pt := range a.PeerTools {
			if err := pt.validate(fmt.Sprintf("%s.peer_tools[%d]", path, j)); err != nil {
				return err
			}
		}
		names := map[string]int{}
		for j, h := range a.Handoffs {
			p := fmt.Sprintf("%s.handoffs[%d]", path, j)
			if err := h.validate(p); err != nil {
				return err
			}
			if err := c.validateHandoff(p, a, h.Target); err != nil {
				return err
			}
			name := handoffOf(h.Target).Name()
			if k, dup := names[name]; dup {
				return fmt.Errorf("%s: %q and handoffs[%d] are both offered as the tool %s", p, h.Target, k, name)
			}
			names[name] = j
		}
	}
	return nil
}

func (pt PeerTool) validate(path string) error {
	if !toolNamePattern.MatchString(pt.Name) {
		return fmt.Errorf("%s.name: %q must be 1-64 letters, digits, '_' or '-'", path, pt.Name)
	}
	rc := remote.Config{Peer: pt.Card, Base: func() string { return "" }}
	if err := rc.Validate(); err != nil {
		return fmt.Errorf("%s.card: %w", path, err)
	}
	return Agent{Engine: "remote", Peer: pt.Card, Auth: pt.Auth}.validateRemote(path)
}

func (c *Config) validateHandoff(path string, a Agent, target string) error {
	if isPeerURL(target) {
		rc := remote.Config{Peer: target, Base: func() string { return "" }}
		if err := rc.Validate(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	if target == a.ID {
		return fmt.Errorf("%s: %q is the agent itself", path, target)
	}
	if !slices.Contains(c.agentIDs(), target) {
		return fmt.Errorf("%s: unknown agent %q (agents: %s; or give a peer's card URL)", path, target, strings.Join(c.agentIDs(), ", "))
	}
	return nil
}

// hasPeerTool says the agent declares a peer tool of that name: it is
// the agent's whether or not tools lists it (listing it lets
// tool_settings refer to it).
func (a Agent) hasPeerTool(name string) bool {
	return slices.ContainsFunc(a.PeerTools, func(pt PeerTool) bool { return pt.Name == name })
}

// isPeerURL says a hand-off target is a peer's card (a URL — validation
// wants http or https — or a path on this server) rather than an agent id.
func isPeerURL(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "/")
}

// handoffOf is the agent layer's hand-off to target. A peer's tool name
// comes from the agent id in its card path (/agents/<id>/…), else its
// host, so that the model sees "transfer_to_echo", not a URL.
func handoffOf(target string) agent.Handoff {
	h := agent.Handoff{ToAgentID: target}
	if !isPeerURL(target) {
		return h
	}
	name := target
	if u, err := url.Parse(target); err == nil {
		name = u.Host
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if i := slices.Index(parts, "agents"); i >= 0 && i+1 < len(parts) {
			name = parts[i+1]
		}
	}
	h.ToolName = agent.DefaultHandoffToolName(name)
	h.Description = "Transfer the conversation to the peer agent " + name + " (" + target + ")."
	return h
}

// federationTools registers agent a's peer tools and hand-off tools and
// returns every tool name the agent's loop may call.
func (b *builder) federationTools(path string, a Agent) ([]string, error) {
	names := slices.Clone(a.Tools)
	for j, pt := range a.PeerTools {
		p := fmt.Sprintf("%s.peer_tools[%d]", path, j)
		if prev, ok := b.peerTools[pt.Name]; ok {
			// Tools are shared by name: another agent declared this one.
			if !reflect.DeepEqual(prev, pt) {
				return nil, fmt.Errorf("%s.name: %q is declared differently by another agent (tool names are shared: use another name)", p, pt.Name)
			}
			if !slices.Contains(names, pt.Name) {
				names = append(names, pt.Name)
			}
			continue
		}
		headers, err := peerHeaders(p, pt.Auth, b.opts.Getenv)
		if err != nil {
			return nil, err
		}
		t, err := remote.NewTool(remote.ToolConfig{Name: pt.Name, Description: pt.Description, Peer: b.c.peerConfig(pt.Card, headers, b.opts.SelfURL)})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := b.reg.Register(t); err != nil {
			return nil, fmt.Errorf("%s.name: %w", p, err)
		}
		if b.peerTools == nil {
			b.peerTools = map[string]PeerTool{}
		}
		b.peerTools[pt.Name] = pt
		if !slices.Contains(names, pt.Name) {
			names = append(names, pt.Name)
		}
	}
	for _, target := range a.Handoffs {
		h := handoffOf(target.Target)
		if _, dup := b.reg.Get(h.Name()); !dup {
			if err := b.reg.Register(agent.HandoffTool(h)); err != nil {
				return nil, fmt.Errorf("%s.handoffs: %w", path, err)
			}
		}
		names = append(names, h.Name())
	}
	return names, nil
}

// peerConfig is the remote engine's configuration for a peer card: the
// federation section's rules, a relative card resolved against self.
func (c *Config) peerConfig(card string, headers map[string]string, self func() string) remote.Config {
	if self == nil {
		self = func() string { return "" }
	}
	return remote.Config{Peer: card, Base: self, Headers: headers,
		AllowPrivate: c.Federation.AllowPrivate, Timeout: time.Duration(c.Federation.Timeout)}
}

// handoffs wires the hand-offs of the built agents (a second pass: a
// target may be declared after the agent handing off to it). Each target
// is a local agent's engine or a remote engine on the peer's card; the
// agent gets the hand-off decider.
func (b *builder) handoffs(out []*runtime.Agent) error {
	engines := make(map[string]engine.Engine, len(out))
	for _, ra := range out {
		engines[ra.ID] = ra.Engine
	}
	for i, a := range b.c.Agents {
		var hs []agent.Handoff
		for j, target := range a.Handoffs {
			h := runtime.Handoff{Handoff: handoffOf(target.Target), Engine: engines[target.Target], Local: !isPeerURL(target.Target)}
			if !h.Local {
				p := fmt.Sprintf("agents[%d].handoffs[%d]", i, j)
				headers, err := peerHeaders(p, target.Auth, b.opts.Getenv)
				if err != nil {
					return err
				}
				cfg := b.c.peerConfig(target.Target, headers, b.opts.SelfURL)
				cfg.AgentID = h.Name()
				e, err := remote.New(cfg)
				if err != nil {
					return fmt.Errorf("agents[%d].handoffs[%d]: %w", i, j, err)
				}
				h.Engine = e
			}
			out[i].Handoffs = append(out[i].Handoffs, h)
			out[i].Tools = append(out[i].Tools, h.Name())
			hs = append(hs, h.Handoff)
		}
		if len(hs) > 0 {
			out[i].Deciders = append(out[i].Deciders, agent.HandoffDecider(hs))
		}
		for _, pt := range a.PeerTools {
			if !slices.Contains(out[i].Tools, pt.Name) {
				out[i].Tools = append(out[i].Tools, pt.Name)
			}
		}
	}
	return nil
}

// peerHeaders reads a peer's credentials from the environment.
func peerHeaders(path string, au *PeerAuth, getenv Env) (map[string]string, error) {
	headers := map[string]string{}
	if au == nil {
		return headers, nil
	}
	name, header, prefix := au.BearerEnv, "Authorization", "Bearer "
	if au.APIKeyEnv != "" {
		name, header, prefix = au.APIKeyEnv, nonEmpty(au.Header, "X-API-Key"), ""
	}
	v := getenv(name)
	if v == "" {
		return nil, fmt.Errorf("%s.auth: environment variable %s is not set", path, name)
	}
	headers[header] = prefix + v
	return headers, nil
}
