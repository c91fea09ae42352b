package flow

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// checkpoint writes the flow state: Step "node:<id>", the board, and the
// state as Payload. A cancelled ctx writes none (the previous checkpoint
// still describes a consistent run); a failed write fails the run, since
// going on without it would let a crash repeat a completed action.
func (x *execution) checkpoint() error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	payload, err := json.Marshal(x.st)
	if err != nil {
		return errdefs.Internalf("flow %s: encode state at node %q: %w", x.f.name, x.st.Node, err)
	}
	cp := engine.Checkpoint{
		ExecID:            x.run.ID,
		Step:              stepPrefix + x.st.Node,
		Iteration:         len(x.st.History),
		Board:             x.board.Snapshot(),
		Payload:           payload,
		Attributes:        maps.Clone(x.run.Attributes),
		Timestamp:         time.Now().UTC(),
		OriginalStartedAt: x.startedAt,
		SpecVersion:       x.e.cfg.SpecVersion,
	}
	if err := x.host.Checkpoint(x.ctx, cp); err != nil {
		return fmt.Errorf("flow %s: checkpoint at node %q: %w", x.f.name, x.st.Node, err)
	}
	return nil
}
