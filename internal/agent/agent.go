package agent

// Agent is the application-layer description of one logical agent. It is
// plain data, not a live object: Run takes the engine that executes the
// turn as a separate argument, so one Agent value can be driven by
// different engines without being rebuilt.
type Agent struct {
	// ID is the agent's stable identifier; it flows into engine.Run
	// attributes, events and A2A paths. Run refuses an empty ID.
	ID string `json:"id"`
	// Card describes the agent for discovery (A2A, console).
	Card AgentCard `json:"card,omitzero"`
	// Tools lists the tool names the agent may call. The engine resolves
	// them from its dependencies; this list is the policy gate, not the
	// wiring.
	Tools []string `json:"tools,omitempty"`
	// Observers fire on every Run of this agent, in order. They carry
	// runtime state, so JSON skips them.
	Observers []Observer `json:"-"`
	// Deciders run on every Run of this agent, in order. JSON skips them
	// for the same reason.
	Deciders []Decider `json:"-"`
}

// AgentCard describes an agent for discovery. Every field marshals under
// the key A2A's AgentCard uses for the same concept, so the A2A layer can
// embed it and add the deployment fields (url, interfaces, provider,
// security) without renaming anything.
type AgentCard struct {
	// Name is the human-readable name.
	Name string `json:"name"`
	// Description says what the agent does.
	Description string `json:"description,omitempty"`
	// Version is the version of the agent's definition. A2A requires it on
	// an exposed card; the A2A layer substitutes a default when it is
	// empty.
	Version string `json:"version,omitempty"`
	// Skills lists what the agent can do.
	Skills []Skill `json:"skills,omitempty"`
	// DefaultInputModes lists the media types the agent accepts when a
	// skill does not say otherwise.
	DefaultInputModes []string `json:"defaultInputModes,omitempty"`
	// DefaultOutputModes lists the media types the agent produces when a
	// skill does not say otherwise.
	DefaultOutputModes []string `json:"defaultOutputModes,omitempty"`
	// Capabilities declares the optional A2A features the agent supports.
	Capabilities AgentCapabilities `json:"capabilities,omitzero"`
}

// AgentCapabilities declares which optional A2A features an agent supports,
// under A2A's keys (note the plural pushNotifications).
type AgentCapabilities struct {
	// Streaming: the agent streams updates during a turn.
	Streaming bool `json:"streaming,omitempty"`
	// PushNotifications: the agent can push updates to a client webhook.
	PushNotifications bool `json:"pushNotifications,omitempty"`
	// StateTransitionHistory: the agent exposes a task's state history.
	StateTransitionHistory bool `json:"stateTransitionHistory,omitempty"`
}

// Skill is one capability unit on an AgentCard, shaped like A2A's
// AgentSkill so cards round-trip through /.well-known/agent-card.json.
type Skill struct {
	// ID identifies the skill within the agent.
	ID string `json:"id"`
	// Name is the human-readable label.
	Name string `json:"name"`
	// Description says what the skill does.
	Description string `json:"description,omitempty"`
	// Tags categorise the skill.
	Tags []string `json:"tags,omitempty"`
	// Examples are prompts the skill handles.
	Examples []string `json:"examples,omitempty"`
	// InputModes override AgentCard.DefaultInputModes; empty means the
	// agent default.
	InputModes []string `json:"inputModes,omitempty"`
	// OutputModes override AgentCard.DefaultOutputModes; empty means the
	// agent default.
	OutputModes []string `json:"outputModes,omitempty"`
}
