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
	cp, err := x.checkpointOf(step, x.st)
	if err != nil {
		return err
	}
	gen, err := x.saves.queue(cp)
	if err != nil {
		return err
	}
	return x.saves.wait(gen)
}

// forward publishes one peer update (emit, through the Publisher it is
// given) and moves x to state next, which covers it. With a host that
// can (engine.CheckpointedPublisher: agentd's runtime) next's checkpoint
// is written in the same store transaction as the update's event, so the
// log and the checkpoint never disagree; otherwise the event is published
// and the checkpoint queued for the saver, and a crash between the two
// writes forwards the update again.
func (x *attempt) forward(next state, emit func(engine.Publisher) error) error {
	cp, err := x.checkpointOf(stepTask, next)
	if err != nil {
		return err
	}
	if pub, ok := engine.WithCheckpoint(x.host, cp); ok {
		if err := emit(pub); err != nil {
			return err
		}
		x.st = next
		return x.saves.failed()
	}
	if err := emit(x.host); err != nil {
		return err
	}
	x.st = next
	_, err = x.saves.queue(cp)
	return err
}

// checkpointOf is the checkpoint of state st at step.
func (x *attempt) checkpointOf(step string, st state) (engine.Checkpoint, error) {
	payload, err := json.Marshal(st)
	if err != nil {
		return engine.Checkpoint{}, errdefs.Internalf("remote: encode checkpoint: %w", err)
	}
	cp := engine.Checkpoint{
		ExecID: x.run.ID, Step: step, Board: x.board.Snapshot(), Payload: payload,
		Attributes: x.run.Attributes, Timestamp: time.Now().UTC(),
	}
	if rc, ok := engine.ResumeContextFromContext(x.ctx); ok {
		cp.OriginalStartedAt = rc.StartedAt
	}
	return cp, nil
}
