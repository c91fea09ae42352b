package runtime

import (
	"agentd/internal/engine"
)

// ProgressData is the body of a progress event: an increment of a tool
// call's progress while it runs — a peer agent's streamed answer or state,
// when the peer is called as a tool (engine.ToolProgress). It is not the
// run's own output: A2A readers get it as a working status update, never
// as a chunk of the answer.
type ProgressData = engine.ToolProgress
