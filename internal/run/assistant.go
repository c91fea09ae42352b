package run

import "time"

// Assistant is one version of a stored assistant: a named configuration of
// a configured agent (its graph, in the Agent Protocol's words). Versions
// are immutable once stored; a change is a new version, and one version of
// each assistant is its latest, the one a run that names the assistant
// uses.
type Assistant struct {
	ID string `json:"assistant_id"`
	// AgentID is the configured agent the assistant configures.
	AgentID     string `json:"agent_id"`
	Version     int    `json:"version"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Context holds what the assistant overrides of its agent (model,
	// system_prompt, sampling, tools, response_schema), as the client
	// wrote it; the runtime validates it against the agent.
	Context map[string]any `json:"context,omitempty"`
	// Config is the Agent Protocol's config object (configurable, tags),
	// kept as written.
	Config   map[string]any `json:"config,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// CreatedAt is when the assistant was created (version 1) and
	// UpdatedAt when its latest changed; VersionCreatedAt is when this
	// version was stored. All three are set by the store.
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
	VersionCreatedAt time.Time `json:"version_created_at"`
}

// AssistantQuery selects assistants (their latest versions), newest first
// by creation.
type AssistantQuery struct {
	// AgentID and Name, when set, keep the assistants of that agent, of
	// that name.
	AgentID string
	Name    string
	// Metadata, when set, keeps assistants whose metadata holds every key
	// with an equal value (JSON containment at the top level).
	Metadata map[string]any
	// Offset skips that many matches; Limit bounds the page (default 10,
	// at most 1000).
	Offset int
	Limit  int
}

// AssistantPageLimit returns q's limit, defaulted and bounded.
func (q AssistantQuery) AssistantPageLimit() int {
	return pageLimit(q.Limit, 10)
}
