package remote

import (
	"net/url"
	"strings"
)

// peerName names the peer in errors a client, a model or a transcript
// reads: the agent id its card path gives (/agents/<id>/…), else the local
// agent that calls it — never the card's URL, whose host may be an
// internal address. Operators find the URL in the configuration.
func (c Config) peerName() string {
	if u, err := url.Parse(c.Peer); err == nil {
		if rest, ok := strings.CutPrefix(u.Path, "/agents/"); ok {
			if id, _, _ := strings.Cut(rest, "/"); id != "" {
				return "peer agent " + id
			}
		}
	}
	if c.AgentID != "" {
		return "the peer of agent " + c.AgentID
	}
	return "the peer agent"
}
