package agent

import "maps"

// The engine.Run.Attributes keys under which Run writes a turn's
// identifiers. agent_id and run_id are spelled like the event package's
// well-known headers so hosts can copy attributes into event headers
// unchanged.
const (
	AttrAgentID   = "agent_id"
	AttrRunID     = "run_id"
	AttrTaskID    = "task_id"
	AttrContextID = "context_id"
)

// RunInfo identifies one turn. It is passed by value to every Observer and
// Decider call and stays the same across revise attempts; anything beyond
// identification travels as a separate, typed argument.
type RunInfo struct {
	// AgentID is the running Agent.ID.
	AgentID string
	// RunID is the execution id (Request.RunID, the minted one, or the
	// checkpoint's ExecID when resuming).
	RunID string
	// TaskID echoes Request.TaskID.
	TaskID string
	// ContextID echoes Request.ContextID.
	ContextID string
}

// attributes returns the well-known attributes of info plus extra (which
// wins), omitting empty identifiers so a missing key always means "not
// supplied". The map is new on every call.
func (info RunInfo) attributes(extra map[string]string) map[string]string {
	attrs := make(map[string]string, 4+len(extra))
	for _, kv := range [...][2]string{
		{AttrAgentID, info.AgentID}, {AttrRunID, info.RunID},
		{AttrTaskID, info.TaskID}, {AttrContextID, info.ContextID},
	} {
		if kv[1] != "" {
			attrs[kv[0]] = kv[1]
		}
	}
	maps.Copy(attrs, extra)
	return attrs
}

// RunInfoFromAttributes rebuilds the RunInfo that Run wrote into
// engine.Run.Attributes, for code below the engine (a graph step running a
// sub-agent, a tool) that sees only the engine.Run. runID is taken from the
// argument — normally engine.Run.ID, the canonical source — rather than
// from the attribute copy. Missing keys yield empty fields; it never fails.
func RunInfoFromAttributes(runID string, attrs map[string]string) RunInfo {
	return RunInfo{
		AgentID:   attrs[AttrAgentID],
		RunID:     runID,
		TaskID:    attrs[AttrTaskID],
		ContextID: attrs[AttrContextID],
	}
}
