package runtime

import (
	"encoding/json"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
)

// Event types of a run's log, as clients see them (SSE `event:` and the
// `type` member of every event's data).
const (
	EventRunStart     = runlog.EventRunStart
	EventStatus       = runlog.EventStatus
	EventDelta        = runlog.EventDelta
	EventReasoning    = "reasoning"
	EventPlan         = "plan"
	EventStepStart    = "step.start"
	EventStepComplete = "step.complete"
	EventStepError    = "step.error"
	EventInput        = "input"
	EventArtifact     = "artifact"
	EventProgress     = "progress"
	EventHandoff      = "handoff"
	EventGap          = runlog.EventGap
	EventRunEnd       = runlog.EventRunEnd
)

// RunStartData is the body of a run.start event: an attempt begins.
type RunStartData struct {
	ContextID string `json:"context_id"`
	AgentID   string `json:"agent_id"`
	Attempt   int    `json:"attempt"`
	// Resumed says why a later attempt started: "input" (the user answered),
	// "crash" (recovery on another replica), ResumedByCancel, or "" for a
	// fresh run.
	Resumed string `json:"resumed,omitempty"`
	// Continues says the attempt goes on from where the cut attempt's
	// output stopped (engine.Capabilities.ResumeContinuesOutput), rather
	// than producing it again from the checkpoint.
	Continues bool `json:"continues,omitempty"`
}

// ResumedByCancel marks the attempt that records the cancel of a task that
// waited for input: run.start, status canceled and run.end, and no engine.
const ResumedByCancel = "cancel"

// StatusData is the body of a status event: the task changed state.
type StatusData struct {
	State   run.TaskState  `json:"state"`
	Message *model.Message `json:"message,omitempty"`
	Error   *run.TaskError `json:"error,omitempty"`
	// Outcome qualifies a completed state: "partial" when the workflow
	// completed only some of its steps (MetaOutcome).
	Outcome string `json:"outcome,omitempty"`
}

// DeltaData is the body of a delta event: one increment of a step's output.
// Exactly one of Text, ToolCall and ToolResult is set.
type DeltaData struct {
	Actor      string            `json:"actor,omitempty"`
	Text       string            `json:"text,omitempty"`
	ToolCall   *model.ToolCall   `json:"tool_call,omitempty"`
	ToolResult *model.ToolResult `json:"tool_result,omitempty"`
}

// ReasoningData is the body of a reasoning event: a piece of the model's
// visible thinking, streamed apart from its answer (never in the
// transcript's answer text).
type ReasoningData struct {
	Actor string `json:"actor,omitempty"`
	Text  string `json:"text"`
}

// StepData is the body of step.start, step.complete and step.error events.
type StepData struct {
	Actor   string          `json:"actor"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// PlanData is the body of a plan event: the work a run is about to do, as
// its engine describes it (a workflow's DAG), published at the start of an
// attempt.
type PlanData struct {
	Actor string          `json:"actor,omitempty"`
	Plan  json.RawMessage `json:"plan"`
}

// InputData is the body of an input event: the run asks the user.
type InputData struct {
	Prompt model.Message   `json:"prompt"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Source string          `json:"source,omitempty"`
}

// ArtifactData is the body of an artifact event: the engine's artifact
// payload as published. Append says the parts extend an artifact already
// announced; LastChunk closes it.
type ArtifactData = engine.ArtifactUpdate

// GapData is the body of a gap event: events up to PrunedThrough were
// removed by retention and cannot be replayed.
type GapData = runlog.GapData

// RunEndData is the body of a run.end event: an attempt ended.
type RunEndData struct {
	State run.TaskState    `json:"state"`
	Error *run.TaskError   `json:"error,omitempty"`
	Usage model.TokenUsage `json:"usage"`
	// Outcome: as StatusData's.
	Outcome string `json:"outcome,omitempty"`
}

// encodeBody marshals an event body once; the log splices it into the
// event's data without decoding it again.
func encodeBody(v any) (json.RawMessage, error) { return json.Marshal(v) }
