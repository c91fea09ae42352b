package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// Shared memory (zenflow's SharedMemory): a key-value store of one run
// that steps write through SharedMemoryWriteTool and read through
// SharedMemoryReadTool. Each entry is namespaced by its writer — the
// step's agent, or the step's id for a step without one — as
// "<writer>/<key>"; a step writes only its own namespace and reads any.
// Entries live in the checkpoint payload (state.Memory): a write is
// checkpointed at once, so a resumed run — on this replica or another —
// has every entry a step wrote before the crash, whether or not that
// step finished. The board mirrors them in its SharedMemoryVar, which the
// run's checkpoints (and the Agent Protocol's thread state) show.

// SharedMemoryVar is the board variable that mirrors the run's shared
// memory: an object of "<writer>/<key>" → value.
const SharedMemoryVar = "shared_memory"

// Limits on shared memory, so that a model cannot grow a checkpoint
// without bound.
const (
	MaxMemoryKeyBytes   = 256
	MaxMemoryValueBytes = 64 * 1024
	MaxMemoryEntries    = 1000
)

// checkpointMemoryPrefix is the Step of a checkpoint written after a
// shared memory write: "memory:<step id>".
const checkpointMemoryPrefix = "memory:"

// stepKey is the context key of the step a child run executes.
type stepKey struct{}

// stepRef is the step a tool call comes from: its execution, its
// namespaced id and its writer name.
type stepRef struct {
	x      *execution
	id     string
	writer string
}

// withStep marks ctx as that of step id's child run, for the workflow
// tools its agent calls.
func withStep(ctx context.Context, x *execution, id, agent string) context.Context {
	writer := agent
	if writer == "" {
		writer = id
	}
	return context.WithValue(ctx, stepKey{}, stepRef{x: x, id: id, writer: strings.ReplaceAll(writer, "/", "_")})
}

func stepFrom(ctx context.Context) (stepRef, error) {
	ref, ok := ctx.Value(stepKey{}).(stepRef)
	if !ok {
		return stepRef{}, errdefs.Validationf("this tool works only in a step of a graph workflow")
	}
	return ref, nil
}

// memoryWrite stores value under "<writer>/<key>", checkpoints, and
// notes the write on the run's log.
func (s stepRef) memoryWrite(key, value string) (string, error) {
	key = strings.TrimSpace(key)
	switch {
	case key == "" || strings.Contains(key, "/"):
		return "", errdefs.Validationf("key %q: want a non-empty name without /; it is stored under %q", key, s.writer+"/<key>")
	case len(key) > MaxMemoryKeyBytes:
		return "", errdefs.Validationf("key: %d bytes, at most %d", len(key), MaxMemoryKeyBytes)
	case len(value) > MaxMemoryValueBytes:
		return "", errdefs.Validationf("value: %d bytes, at most %d", len(value), MaxMemoryValueBytes)
	}
	x := s.x
	qualified := s.writer + "/" + key
	x.mu.Lock()
	if _, ok := x.st.Memory[qualified]; !ok && len(x.st.Memory) >= MaxMemoryEntries {
		x.mu.Unlock()
		return "", errdefs.Validationf("shared memory holds %d entries, the most a run may", MaxMemoryEntries)
	}
	if x.st.Memory == nil {
		x.st.Memory = map[string]string{}
	}
	x.st.Memory[qualified] = value
	mirror := maps.Clone(x.st.Memory)
	x.mu.Unlock()
	x.board.SetVar(SharedMemoryVar, mirror)
	if err := x.checkpoint(checkpointMemoryPrefix + s.id); err != nil {
		return "", err
	}
	x.note(s.id, "shared_memory_write", map[string]any{"step": s.id, "key": qualified, "bytes": len(value)})
	return qualified, nil
}

// memoryRead reads a qualified key ("<writer>/<key>"), a key of the
// step's own namespace, or — with an empty key — lists every entry.
func (s stepRef) memoryRead(key string) (string, bool) {
	x := s.x
	x.mu.Lock()
	defer x.mu.Unlock()
	key = strings.TrimSpace(key)
	if key == "" {
		return memorySummary(x.st.Memory), true
	}
	if !strings.Contains(key, "/") {
		key = s.writer + "/" + key
	}
	v, ok := x.st.Memory[key]
	return v, ok
}

// memorySummary lists the entries, one "- <key>: <value>" line each,
// values cut to 100 bytes, keys sorted.
func memorySummary(m map[string]string) string {
	if len(m) == 0 {
		return "(shared memory is empty)"
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "- %s: %s\n", k, truncate(m[k], 100))
	}
	return b.String()
}

// note publishes a workflow note of kind with payload.
func (x *execution) note(stepID, kind string, payload any) {
	b, err := json.Marshal(payload)
	if err != nil {
		return
	}
	actor := x.actor
	if stepID != "" {
		actor = engine.NodeActor(x.actor, stepID)
	}
	_ = x.host.Publish(x.ctx, engine.WorkflowNote{Actor: actor, Kind: kind, Payload: b})
}
