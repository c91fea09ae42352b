package remote

import (
	"encoding/json"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Checkpoint steps. stepTask: the peer task is known and streaming;
// stepAsk: the peer asked for input and the run waits for the user.
const (
	stepTask = "peer:task"
	stepAsk  = "peer:ask"
)

// state is the checkpoint payload: where the run stands with its peer
// task. It is written after every peer update that changed the local run
// (a token, an artifact, the task id, a question), so a resumed attempt
// knows what was already forwarded.
type state struct {
	// TaskID and ContextID name the peer task once the peer answered.
	TaskID    string `json:"task_id,omitempty"`
	ContextID string `json:"context_id,omitempty"`
	// Seq is the resumable-stream seq of the last update forwarded (peers
	// that declare agentd's extension); 0 when the peer has no cursors.
	Seq int64 `json:"seq,omitempty"`
	// Text is every answer text forwarded as tokens, in order; a resume
	// without cursors forwards what the peer's Task holds beyond it.
	Text string `json:"text,omitempty"`
	// Answer is the part of Text since the last question: the message
	// the run answers with.
	Answer string `json:"answer,omitempty"`
	// Asked is the peer's pending question, set while its task is in
	// input-required or auth-required.
	Asked *question `json:"asked,omitempty"`
}

type question struct {
	Parts []model.Part `json:"parts,omitempty"`
	Auth  bool         `json:"auth,omitempty"`
}

func decodeState(cp engine.Checkpoint) (state, error) {
	var st state
	if !strings.HasPrefix(cp.Step, "peer:") {
		return st, errdefs.Validationf("remote: cannot resume from step %q", cp.Step)
	}
	if len(cp.Payload) > 0 {
		if err := json.Unmarshal(cp.Payload, &st); err != nil {
			return st, errdefs.Validationf("remote: checkpoint at step %q: %v", cp.Step, err)
		}
	}
	if st.TaskID == "" {
		return st, errdefs.Validationf("remote: checkpoint at step %q names no peer task", cp.Step)
	}
	return st, nil
}

// checkpoint records x's state at step and waits until it is written:
// for the states another attempt must find (the peer task named, a
// question asked).
func (x *attempt) checkpoint(step string) error {
	gen, err := x.checkpointSoon(step)
	if err != nil {
		return err
	}
	return x.saves.wait(gen)
}

// checkpointSoon queues x's state at step for the saver.
func (x *attempt) checkpointSoon(step string) (uint64, error) {
	payload, err := json.Marshal(x.st)
	if err != nil {
		return 0, errdefs.Internalf("remote: encode checkpoint: %w", err)
	}
	cp := engine.Checkpoint{
		ExecID: x.run.ID, Step: step, Board: x.board.Snapshot(), Payload: payload,
		Attributes: x.run.Attributes, Timestamp: time.Now().UTC(),
	}
	if rc, ok := engine.ResumeContextFromContext(x.ctx); ok {
		cp.OriginalStartedAt = rc.StartedAt
	}
	return x.saves.queue(cp)
}
