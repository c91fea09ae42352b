package config

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// HandoffTarget is a hand-off target: an agent id of this file or a peer's
// card URL, written as a plain string, or {card, auth} for a peer that
// wants credentials (read from the environment, as for remote agents and
// peer tools).
type HandoffTarget struct {
	// Target is the agent id or the card URL.
	Target string
	// Auth is the peer's credentials (peers only).
	Auth *PeerAuth
	// invalid is why the entry could not be decoded: reported by validate,
	// which knows the entry's path (the decoder does not).
	invalid error
}

// UnmarshalJSON accepts "target" or {"card": …, "auth": {…}}.
func (h *HandoffTarget) UnmarshalJSON(b []byte) error {
	var target string
	if err := json.Unmarshal(b, &target); err == nil {
		*h = HandoffTarget{Target: target}
		return nil
	}
	var o struct {
		Card string    `json:"card"`
		Auth *PeerAuth `json:"auth"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		*h = HandoffTarget{invalid: fmt.Errorf("want an agent id, a peer's card URL or {card, auth}: %v", err)}
		return nil
	}
	*h = HandoffTarget{Target: o.Card, Auth: o.Auth}
	return nil
}

// MarshalJSON writes the short form unless there are credentials.
func (h HandoffTarget) MarshalJSON() ([]byte, error) {
	if h.Auth == nil {
		return json.Marshal(h.Target)
	}
	return json.Marshal(map[string]any{"card": h.Target, "auth": h.Auth})
}

// validate checks the entry at path: a target with credentials must be a
// peer's card.
func (h HandoffTarget) validate(path string) error {
	if h.invalid != nil {
		return fmt.Errorf("%s: %w", path, h.invalid)
	}
	if h.Auth == nil {
		return nil
	}
	if !isPeerURL(h.Target) {
		return fmt.Errorf("%s.card: %q is not a peer's card URL (auth is for peers; a local agent is named by its id alone)", path, h.Target)
	}
	return Agent{Engine: "remote", Peer: h.Target, Auth: h.Auth}.validateRemote(path)
}
