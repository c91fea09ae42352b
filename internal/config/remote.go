package config

import (
	"fmt"

	"agentd/internal/engine/remote"
)

// validateRemote checks a remote agent: a peer card URL (absolute, or a
// path on this server), no provider or tools, and one credential source.
func (a Agent) validateRemote(path string) error {
	if a.Provider != "" || len(a.Tools) > 0 {
		return fmt.Errorf("%s: the remote engine takes no provider or tools (the peer has its own)", path)
	}
	rc := remote.Config{Peer: a.Peer, Base: func() string { return "" }}
	if err := rc.Validate(); err != nil {
		return fmt.Errorf("%s.%w", path, err)
	}
	if au := a.Auth; au != nil {
		switch {
		case au.BearerEnv != "" && au.APIKeyEnv != "":
			return fmt.Errorf("%s.auth: bearer_env and api_key_env are exclusive", path)
		case au.BearerEnv == "" && au.APIKeyEnv == "":
			return fmt.Errorf("%s.auth: want bearer_env or api_key_env (the environment variable holding the secret)", path)
		case au.Header != "" && au.APIKeyEnv == "":
			return fmt.Errorf("%s.auth.header: only for api_key_env", path)
		}
	}
	return nil
}

// buildRemote builds a remote agent's engine; credentials are read from
// the environment now, so a missing secret fails at start-up.
func (c *Config) buildRemote(path string, a Agent, getenv Env, self func() string) (*remote.Engine, error) {
	headers, err := peerHeaders(path, a.Auth, getenv)
	if err != nil {
		return nil, err
	}
	cfg := c.peerConfig(a.Peer, headers, self)
	cfg.AgentID = a.ID
	e, err := remote.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s.%w", path, err)
	}
	return e, nil
}
