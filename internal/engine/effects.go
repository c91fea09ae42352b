package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Tool effects: a call to a tool with effects is recorded in the run's log
// as an intent, durable before the call runs, and its result, durable
// before the run goes on (Host capability EffectLedger). A later attempt
// that finds an intent without a result knows the call is in doubt — it
// may or may not have happened — and resolves it by a policy instead of
// running it again blindly. The effect key, derived from the run, the
// call's position and its arguments, is the same on every attempt and
// travels to the tool (an HTTP Idempotency-Key, MCP _meta, an A2A
// messageId), so a tool that honours it makes a retry harmless.

// Phases of an Effect event.
const (
	// EffectIntent: the call is about to run.
	EffectIntent = "intent"
	// EffectResult: the call ran (or its result was found or given).
	EffectResult = "result"
	// EffectDoubt: an attempt found an intent without a result.
	EffectDoubt = "doubt"
	// EffectResolved: a doubt was resolved; Resolution says how.
	EffectResolved = "resolved"
)

// Policies for a call in doubt.
const (
	// DoubtRetry runs the call again with the same key.
	DoubtRetry = "retry"
	// DoubtReconcile asks the tool's status call whether the effect
	// happened and uses its result; when it did not, the call runs.
	DoubtReconcile = "reconcile"
	// DoubtAsk parks the run until a person answers retry, skip (with a
	// result) or fail.
	DoubtAsk = "ask"
	// DoubtFail fails the run, naming the call.
	DoubtFail = "fail"
)

// Resolutions of a doubt (Effect.Resolution, and the metric's label).
const (
	ResolvedRetried    = "retried"
	ResolvedReconciled = "reconciled"
	ResolvedAbsent     = "absent" // the status call found no effect: the call ran
	ResolvedSkipped    = "skipped"
	ResolvedFailed     = "failed"
)

// Effect is an event of a tool call with effects: its intent, its result,
// a doubt found on resume, or the doubt's resolution.
type Effect struct {
	Phase  string `json:"phase"`
	Actor  string `json:"actor,omitempty"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Key is the effect key the tool received.
	Key string `json:"key"`
	// Digest is the digest of the call's arguments (ArgsDigest).
	Digest string `json:"digest,omitempty"`
	// Effects is the tool's kind: idempotent, keyed or unsafe.
	Effects   string          `json:"effects,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Content, Data and IsError are a result's.
	Content string          `json:"content,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Policy is a doubt's; Resolution and Reason a resolution's.
	Policy     string `json:"policy,omitempty"`
	Resolution string `json:"resolution,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

func (Effect) isEvent() {}

// EffectRecord is what a run's log holds of one key: its intent and, if
// it was recorded, its result.
type EffectRecord struct {
	Intent *Effect
	Result *Effect
}

// InDoubt reports whether the call was intended and has no result.
func (r EffectRecord) InDoubt() bool { return r.Intent != nil && r.Result == nil }

// EffectLedger is the Host capability that keeps the effect ledger in the
// run's log.
type EffectLedger interface {
	// PriorEffects returns, by key, what earlier attempts of the run
	// recorded.
	PriorEffects(ctx context.Context) (map[string]EffectRecord, error)
	// CommitEffects publishes evs and returns once they are durable —
	// with cp, in the same write, when cp is not nil.
	CommitEffects(ctx context.Context, cp *Checkpoint, evs ...Effect) error
}

// ArgsDigest is the digest of a call's arguments: the SHA-256 of their
// canonical JSON (object keys sorted, no spaces), in hex. Arguments that
// are not JSON are digested as they are.
func ArgsDigest(args json.RawMessage) string {
	canon := []byte(args)
	var v any
	if len(bytes.TrimSpace(args)) == 0 {
		canon = []byte("{}")
	} else if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// EffectKey is the effect key of the call at position (an engine's stable
// name for it: "iter:3/call:0", a flow node's visit) of run runID with
// arguments digest: the same on every attempt, and different for another
// run, another position or other arguments.
func EffectKey(runID, position, digest string) string {
	sum := sha256.Sum256([]byte(runID + "\x00" + position + "\x00" + digest))
	return "fx-" + hex.EncodeToString(sum[:16])
}
