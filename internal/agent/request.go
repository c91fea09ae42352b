package agent

import "agentd/internal/model"

// Request is one turn submitted to Run. JSON keys follow A2A's
// MessageSendParams (camelCase) so a request crosses the protocol without
// translation.
type Request struct {
	// TaskID names the long-lived task the turn belongs to; empty when the
	// caller does not track tasks. A2A "taskId".
	TaskID string `json:"taskId,omitempty"`
	// ContextID names the conversation; empty when the turn has no
	// persistent transcript. A2A "contextId".
	ContextID string `json:"contextId,omitempty"`
	// RunID is the host-chosen execution id; Run mints a UUIDv7 when it is
	// empty. It becomes engine.Run.ID.
	RunID string `json:"runId,omitempty"`
	// Message is the new user input of this turn. The default seeder
	// appends it to the board's main channel.
	Message model.Message `json:"message"`
	// Inputs are structured inputs (form fields, parameters). The default
	// seeder stores each under its key as a board var.
	Inputs map[string]any `json:"inputs,omitempty"`
	// Config carries per-request preferences. A2A "configuration".
	Config *RequestConfig `json:"configuration,omitempty"`
}

// RequestConfig holds per-request preferences, keyed like A2A's
// MessageSendConfiguration.
type RequestConfig struct {
	// AcceptedOutputModes lists the media types the caller can receive;
	// engines that can produce several pick from it.
	AcceptedOutputModes []string `json:"acceptedOutputModes,omitempty"`
}
