package api

import (
	"net/http"
	"runtime/debug"
	"time"
)

// ServerView is the answer of GET /v1/server: what this server is and how
// it is doing, for operators and the console.
type ServerView struct {
	// Version is the module version and, when known, the VCS revision it
	// was built from.
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	GoVersion string `json:"go_version"`
	// Store is "memory" (the embedded store) or "postgres".
	Store string `json:"store"`
	// Ready says whether this replica can serve (as /readyz); Reason says
	// why not.
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
	Agents int    `json:"agents"`
	// Links name the documents a client starts from.
	Links     map[string]string `json:"links"`
	StartedAt time.Time         `json:"started_at"`
}

// serverInfo answers GET /v1/server.
func (s *Server) serverInfo(w http.ResponseWriter, r *http.Request) {
	v := ServerView{Version: "(devel)", Store: s.opts.Store, Ready: true, Agents: len(s.rt.Agents()),
		StartedAt: s.started, Links: map[string]string{
			"openapi": "/openapi.yaml", "agents": "/v1/agents", "agent_card": "/.well-known/agent-card.json",
		}}
	if v.Store == "" {
		v.Store = "memory"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.GoVersion = bi.GoVersion
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		for _, st := range bi.Settings {
			if st.Key == "vcs.revision" {
				v.Revision = st.Value
			}
		}
	}
	if s.opts.Ready != nil {
		if err := s.opts.Ready(r.Context()); err != nil {
			v.Ready, v.Reason = false, "the store is not reachable"
		}
	}
	writeJSON(w, http.StatusOK, v)
}
