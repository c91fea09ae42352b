package agentproto

import (
	"encoding/json"
	"time"

	"agentd/internal/runtime"
)

// streamModes is stream_mode: one mode or a list.
type streamModes []string

// UnmarshalJSON takes a string or a list of strings.
func (m *streamModes) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*m = streamModes{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return badInput("stream_mode", "want a mode or a list of modes")
	}
	*m = list
	return nil
}

// knownModes are the stream modes served.
var knownModes = map[string]bool{
	"values": true, "updates": true, "messages": true, "messages-tuple": true, "events": true,
	"custom": true, "debug": true, "tasks": true, "checkpoints": true,
}

// runBody is the body of a run's creation (RunCreate).
type runBody struct {
	AssistantID string          `json:"assistant_id"`
	Input       json.RawMessage `json:"input"`
	Command     *struct {
		Resume json.RawMessage `json:"resume"`
		Goto   json.RawMessage `json:"goto"`
		Update json.RawMessage `json:"update"`
	} `json:"command"`
	Metadata          map[string]any  `json:"metadata"`
	Config            json.RawMessage `json:"config"`
	Context           json.RawMessage `json:"context"`
	StreamMode        streamModes     `json:"stream_mode"`
	StreamSubgraphs   bool            `json:"stream_subgraphs"`
	StreamResumable   bool            `json:"stream_resumable"`
	Checkpoint        *checkpointJSON `json:"checkpoint"`
	CheckpointID      string          `json:"checkpoint_id"`
	Webhook           string          `json:"webhook"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	OnDisconnect      string          `json:"on_disconnect"`
	OnCompletion      string          `json:"on_completion"`
	IfNotExists       string          `json:"if_not_exists"`
	AfterSeconds      float64         `json:"after_seconds"`
	InterruptBefore   json.RawMessage `json:"interrupt_before"`
	InterruptAfter    json.RawMessage `json:"interrupt_after"`
}

// check refuses what is malformed or not served, naming the field.
func (b *runBody) check() error {
	if b.AssistantID == "" {
		return badInput("assistant_id", "is required")
	}
	for _, m := range b.StreamMode {
		if !knownModes[m] {
			return badInput("stream_mode", "%q: want values, updates, messages, messages-tuple, events, custom, debug, tasks or checkpoints", m)
		}
	}
	switch b.MultitaskStrategy {
	case "", "reject", "enqueue", "interrupt", "rollback":
	default:
		return badInput("multitask_strategy", "%q: want reject, enqueue, interrupt or rollback", b.MultitaskStrategy)
	}
	switch b.OnDisconnect {
	case "", "continue", "cancel":
	default:
		return badInput("on_disconnect", "%q: want continue or cancel", b.OnDisconnect)
	}
	switch b.IfNotExists {
	case "", "reject", "create":
	default:
		return badInput("if_not_exists", "%q: want reject or create", b.IfNotExists)
	}
	if nonEmpty(b.InterruptBefore) || nonEmpty(b.InterruptAfter) {
		return badInput("interrupt_before", "static breakpoints are not served: agentd's agents interrupt where they ask for input or approval")
	}
	if b.Webhook != "" {
		if err := checkWebhook(b.Webhook); err != nil {
			return err
		}
	}
	if b.AfterSeconds < 0 || b.AfterSeconds > runtime.MaxSendDelay.Seconds() {
		return badInput("after_seconds", "%v: want between 0 and %v seconds", b.AfterSeconds, runtime.MaxSendDelay.Seconds())
	}
	if b.Command != nil && (nonEmpty(b.Command.Goto) || nonEmpty(b.Command.Update)) {
		return badInput("command", "only command.resume is served")
	}
	return nil
}

// forkFrom is the checkpoint the run continues from, if any.
func (b *runBody) forkFrom() string {
	if b.CheckpointID != "" {
		return b.CheckpointID
	}
	if b.Checkpoint != nil {
		return b.Checkpoint.ID
	}
	return ""
}

// multitask is the policy the body asks for; none leaves the agent's
// (reject unless its configuration says otherwise, as LangGraph's default).
// Rollback is reject once the thread's active runs were rolled back.
func (b *runBody) multitask() runtime.MultitaskPolicy {
	if b.MultitaskStrategy == "rollback" {
		return runtime.MultitaskReject
	}
	return runtime.MultitaskPolicy(b.MultitaskStrategy)
}

// prepare checks the body for a run taken as await says, and reads its
// config; a checkpoint_id in config.configurable is the fork's when the
// body names none.
func (b *runBody) prepare(await runtime.Await) (runConfig, error) {
	if err := b.check(); err != nil {
		return runConfig{}, err
	}
	if b.AfterSeconds > 0 && await != runtime.AwaitNone {
		return runConfig{}, badInput("after_seconds", "a delayed run is created in the background (runs.create); wait or stream it with join once created")
	}
	if b.AfterSeconds > 0 && b.Command != nil && nonEmpty(b.Command.Resume) {
		return runConfig{}, badInput("after_seconds", "a resume is not delayed")
	}
	rc, err := b.parseConfig()
	if err == nil && b.forkFrom() == "" {
		b.CheckpointID = rc.checkpointID
	}
	return rc, err
}

// afterDelay is after_seconds as a duration.
func afterDelay(seconds float64) time.Duration {
	return time.Duration(seconds * float64(time.Second))
}

func nonEmpty(raw json.RawMessage) bool {
	s := string(raw)
	return len(raw) > 0 && s != "null" && s != "[]" && s != `""`
}
