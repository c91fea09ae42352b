package engine

import (
	"encoding/json"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Event is what an engine reports to its host while a run is under way:
// one of the types of this file. The set is closed (its method is
// unexported), so a host translates it in one type switch the compiler
// checks, and adding a kind is one struct here and one case there.
//
// Events are values: the host encodes each one exactly once, where its
// log writes it. Engine-specific details the host passes on without
// reading (a step's Detail, a plan, a verdict) are JSON the engine
// encoded, or any value encoding/json encodes.
//
// The run an event belongs to is the host's: a host serves one run, and
// a host that relays another run's events (a workflow step's child run)
// rewrites them as its own.
type Event interface{ isEvent() }

// Actor names who in a run does something: the executing agent's id,
// optionally with ".node.<id>" for a graph node (NodeActor).
// ParseStepActor splits it again.

// Token is a piece of generated assistant text; Text is never empty.
type Token struct {
	Actor string
	Text  string
}

// Reasoning is a piece of the model's visible thinking, streamed apart
// from its answer (a provider's reasoning_content); Text is never empty.
// It is shown, never part of the transcript's answer.
type Reasoning struct {
	Actor string
	Text  string
}

// ToolCall is a tool call the model requested. ID and Name are required;
// Arguments is the tool input as JSON (nil: none).
type ToolCall struct {
	Actor     string
	ID, Name  string
	Arguments json.RawMessage
}

// ToolResult is the outcome of a tool call, or a synthesised one for a
// call never dispatched (Cancelled). ToolCallID is required; Content may
// be empty, since a tool may return nothing.
type ToolResult struct {
	Actor      string
	ToolCallID string
	Name       string
	Content    string
	IsError    bool
	Cancelled  bool
}

// Step names one step of a run for the step events: Actor, an
// engine-defined Kind ("model", "tool", "node", …) and Detail, anything
// encoding/json encodes (json.RawMessage included; nil for none). RunID
// is the run the step ran in, as the log's step payload reports it: the
// engine's run (empty: the host's run), or the child run a relaying host
// passes on.
type Step struct {
	RunID  string
	Actor  string
	Kind   string
	Detail any
}

// StepStarted reports that a step begins.
type StepStarted struct{ Step }

// StepCompleted reports that a step succeeded.
type StepCompleted struct{ Step }

// StepFailed reports that a step failed with Err (never nil: a nil Err
// reads as an Internal error).
type StepFailed struct {
	Step
	Err error
}

// ArtifactUpdate is an artifact, or a chunk of one. The first chunk of an
// artifact has Append false; later chunks with Append true extend its
// parts; LastChunk marks the final chunk. The artifact needs an ID and at
// least one valid part (Validate).
type ArtifactUpdate struct {
	Artifact  model.Artifact `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"last_chunk,omitempty"`
}

// ToolProgress is one increment of a tool call's progress: what a
// long-running tool call (a peer agent called as a tool) reports while
// the call is under way. Text is a chunk of what the tool streams (a
// peer's answer, token by token); State is the state of the work behind
// the call when it changed (a peer task's "working", "input-required");
// Artifact is a non-text result chunk. It is not the run's own output:
// readers that assemble the run's answer from its text deltas never see
// it there. Tool is required.
type ToolProgress struct {
	// Tool and CallID name the call (the model's tool name and call id).
	Tool   string `json:"tool"`
	CallID string `json:"call_id,omitempty"`
	// Source names what reports (the peer agent's card URL, a child run).
	Source   string          `json:"source,omitempty"`
	Text     string          `json:"text,omitempty"`
	State    string          `json:"state,omitempty"`
	Artifact *model.Artifact `json:"artifact,omitempty"`
}

// Plan is the work a run is about to do, as its engine describes it (a
// workflow's DAG), published once at the start of an attempt. Plan is
// JSON.
type Plan struct {
	Actor string
	Plan  json.RawMessage
}

// Verdict is one governance verdict on a proposed tool call, or a
// human's decision on it. Payload is a JSON object with at least
// "call_id" and "verdict".
type Verdict struct {
	Actor   string
	Payload json.RawMessage
}

// Compaction is one compaction of a run's context: the engine summarised
// the oldest history into a shorter message to stay within the model's
// window. Payload is a JSON object with at least "tokens_before" and
// "tokens_after".
type Compaction struct {
	Actor   string
	Payload json.RawMessage
}

func (Token) isEvent()          {}
func (ToolCall) isEvent()       {}
func (ToolResult) isEvent()     {}
func (StepStarted) isEvent()    {}
func (StepCompleted) isEvent()  {}
func (StepFailed) isEvent()     {}
func (ArtifactUpdate) isEvent() {}
func (ToolProgress) isEvent()   {}
func (Plan) isEvent()           {}
func (Verdict) isEvent()        {}
func (Compaction) isEvent()     {}
func (Reasoning) isEvent()      {}

// Validate checks what every host would refuse: an empty token, a tool
// call without id or name, a result without its call's id, an artifact
// without id or valid parts, progress without a tool. Other kinds pass.
func Validate(ev Event) error {
	switch e := ev.(type) {
	case Token:
		if e.Text == "" {
			return errdefs.Validationf("token of %q: empty text", e.Actor)
		}
	case Reasoning:
		if e.Text == "" {
			return errdefs.Validationf("reasoning of %q: empty text", e.Actor)
		}
	case ToolCall:
		if e.ID == "" || e.Name == "" {
			return errdefs.Validationf("tool call of %q: id %q and name %q are both required", e.Actor, e.ID, e.Name)
		}
	case ToolResult:
		if e.ToolCallID == "" {
			return errdefs.Validationf("tool result of %q: missing tool_call_id", e.Actor)
		}
	case ArtifactUpdate:
		return e.validate()
	case ToolProgress:
		if e.Tool == "" {
			return errdefs.Validationf("tool progress: no tool name")
		}
	case Outcome:
		if e.Status != OutcomePartial {
			return errdefs.Validationf("outcome of %q: status %q, want %q", e.Actor, e.Status, OutcomePartial)
		}
	case WorkflowNote:
		if e.Kind == "" || len(e.Payload) == 0 || !json.Valid(e.Payload) {
			return errdefs.Validationf("workflow note of %q: a kind and a JSON payload are required", e.Actor)
		}
	}
	return nil
}

func (a ArtifactUpdate) validate() error {
	if a.Artifact.ID == "" {
		return errdefs.Validationf("artifact: no id")
	}
	if len(a.Artifact.Parts) == 0 {
		return errdefs.Validationf("artifact %s: no parts", a.Artifact.ID)
	}
	for i, part := range a.Artifact.Parts {
		if err := part.Validate(); err != nil {
			return errdefs.Validationf("artifact %s: parts[%d]: %v", a.Artifact.ID, i, err)
		}
	}
	return nil
}
