package event

import (
	"encoding/json"
	"time"
)

// Well-known header keys. The run, agent and node ids have typed fields on
// Envelope; these names are used when headers are carried on other
// transports (NATS headers, SSE metadata).
const (
	HeaderRunID   = "run_id"
	HeaderAgentID = "agent_id"
	HeaderNodeID  = "node_id"
	HeaderTraceID = "trace_id"
)

// Envelope is one event on a subject: who it concerns, when it happened and a
// JSON payload. Envelopes are values; a published envelope must not be
// mutated by its publisher afterwards (subscribers share Payload and Headers).
type Envelope struct {
	ID      string    `json:"id,omitempty"`
	Subject Subject   `json:"subject"`
	Time    time.Time `json:"time,omitzero"`
	RunID   string    `json:"run_id,omitempty"`
	AgentID string    `json:"agent_id,omitempty"`
	NodeID  string    `json:"node_id,omitempty"`
	// Headers carries further metadata (trace ids, tenant, …).
	Headers map[string]string `json:"headers,omitempty"`
	Payload json.RawMessage   `json:"payload,omitempty"`
}

// Header returns the header value for key, consulting the typed id fields for
// the well-known keys.
func (e Envelope) Header(key string) string {
	switch key {
	case HeaderRunID:
		return e.RunID
	case HeaderAgentID:
		return e.AgentID
	case HeaderNodeID:
		return e.NodeID
	}
	return e.Headers[key]
}

// SetHeader sets a header, writing the typed id fields for the well-known
// keys. It allocates the Headers map on first use.
func (e *Envelope) SetHeader(key, value string) {
	switch key {
	case HeaderRunID:
		e.RunID = value
	case HeaderAgentID:
		e.AgentID = value
	case HeaderNodeID:
		e.NodeID = value
	default:
		if e.Headers == nil {
			e.Headers = make(map[string]string, 2)
		}
		e.Headers[key] = value
	}
}

// NewEnvelope returns an envelope on subject with v encoded as its payload
// and the current time.
func NewEnvelope(subject Subject, v any) (Envelope, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{Subject: subject, Time: time.Now().UTC(), Payload: b}, nil
}
