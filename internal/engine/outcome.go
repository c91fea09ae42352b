package engine

import "encoding/json"

// OutcomePartial is the Outcome of a run that completed without doing all
// its work: a workflow some of whose steps completed while others failed,
// were cancelled or were skipped because a dependency failed (zenflow's
// StatusPartial).
const OutcomePartial = "partial"

// Outcome qualifies a run that ends without an error: the engine
// publishes it once, just before Execute returns nil, when the run did
// not do all it was asked. Status is OutcomePartial; Detail is a JSON
// object the host passes on without reading (which steps failed or were
// skipped). A run with no Outcome event completed fully.
type Outcome struct {
	Actor  string
	Status string
	Detail json.RawMessage
}

// WorkflowNote is one thing that happened between the agents of a
// workflow run that is neither a step nor a token: a message sent between
// a step and the coordinator, a message dropped with its reason, a
// coordinator's narration or summary, a shared memory write. Kind names
// it (zenflow's progress event names: "message_sent", "message_dropped",
// "coordinator_narration", …); Payload is a JSON object the host logs as
// is.
type WorkflowNote struct {
	Actor   string
	Kind    string
	Payload json.RawMessage
}

func (Outcome) isEvent()      {}
func (WorkflowNote) isEvent() {}
