package goal

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// The Step of the engine's checkpoints: every one starts with stepPrefix.
const (
	stepPrefix   = "goal:"
	stepApproval = stepPrefix + "approval" // a plan waits for a person
	stepAccepted = stepPrefix + "accepted" // the plan runs next
	stepGraph    = stepPrefix + "graph:"   // + the graph's own step
)

// The phases of a run, as the checkpoint payload records them.
const (
	phaseApproval = "approval"
	phaseRunning  = "running"
)

// state is the checkpoint payload.
type state struct {
	Version int    `json:"v"`
	Phase   string `json:"phase"`
	// Plan is the workflow document, as JSON: the plan waiting for a
	// decision, or the accepted plan.
	Plan json.RawMessage `json:"plan"`
	// Revision counts the plans put to a person (the pending call is
	// "plan-<Revision>").
	Revision int `json:"revision,omitempty"`
	// Retry says why the previous answer to the approval prompt was not
	// taken.
	Retry string `json:"retry,omitempty"`
	// Graph is the graph engine's latest checkpoint of the running plan.
	Graph *graphCheckpoint `json:"graph,omitempty"`
}

// graphCheckpoint is what the goal keeps of a checkpoint of the graph
// engine: its step, counter and payload (its board is the goal's).
type graphCheckpoint struct {
	Step      string          `json:"step"`
	Iteration int             `json:"iteration,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

const stateVersion = 1

func decodeState(b json.RawMessage) (*state, error) {
	if len(b) == 0 {
		return nil, errdefs.Validationf("no payload")
	}
	st := &state{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, errdefs.Validationf("payload: %w", err)
	}
	if st.Version != stateVersion {
		return nil, errdefs.Validationf("payload version %d, want %d", st.Version, stateVersion)
	}
	if st.Phase != phaseApproval && st.Phase != phaseRunning {
		return nil, errdefs.Validationf("payload phase %q, want %q or %q", st.Phase, phaseApproval, phaseRunning)
	}
	if len(st.Plan) == 0 {
		return nil, errdefs.Validationf("payload holds no plan")
	}
	return st, nil
}

// checkpoint writes the goal's checkpoint at step with st as its payload;
// base, when set, is the graph's checkpoint it wraps (board, counter,
// times). A checkpoint the host fails to write fails the run: going on
// would let a resume plan or run steps again.
func (x *execution) checkpoint(step string, base *engine.Checkpoint) error {
	payload, err := json.Marshal(x.st)
	if err != nil {
		return errdefs.Internalf("goal agent %q: encode checkpoint: %w", x.actor, err)
	}
	cp := engine.Checkpoint{
		ExecID: x.run.ID, Board: x.board.Snapshot(), Attributes: maps.Clone(x.run.Attributes),
		Timestamp: time.Now().UTC(), OriginalStartedAt: x.startedAt,
	}
	if base != nil {
		cp = *base
	}
	cp.Step, cp.Payload, cp.SpecVersion = step, payload, x.e.cfg.SpecVersion
	if err := x.host.Checkpoint(context.WithoutCancel(x.ctx), cp); err != nil {
		return fmt.Errorf("goal agent %q: checkpoint %s: %w", x.actor, step, err)
	}
	return nil
}

// graphResume is the graph's own checkpoint to resume the plan from, if
// the run got that far.
func (x *execution) graphResume() *engine.Checkpoint {
	g := x.st.Graph
	if g == nil {
		return nil
	}
	return &engine.Checkpoint{
		ExecID: x.run.ID, Step: g.Step, Iteration: g.Iteration, Board: x.board.Snapshot(), Payload: g.Payload,
		Attributes: maps.Clone(x.run.Attributes), Timestamp: time.Now().UTC(), OriginalStartedAt: x.startedAt,
	}
}
