package runtime

import (
	"slices"

	"agentd/internal/engine"
	"agentd/internal/model"
)

var _ engine.FeedbackSource = (*childHost)(nil)

// TakeFeedback hands a child's engine the messages its parent's side has
// for it (a workflow step's mailbox: the parent is an
// engine.FeedbackSource) — except those the checkpoint the child resumed
// from holds already, by id: the parent offers again, after a crash, what
// it could not know its child had read, and the child reads each once.
func (h *childHost) TakeFeedback() []model.Message {
	msgs := engine.TakeFeedback(h.out)
	return slices.DeleteFunc(msgs, func(m model.Message) bool { return m.ID != "" && slices.Contains(h.held, m.ID) })
}

// heldMessageIDs lists the ids of the messages on a checkpoint's board.
func heldMessageIDs(cp *engine.Checkpoint) []string {
	if cp == nil || cp.Board == nil {
		return nil
	}
	var ids []string
	for _, m := range cp.Board.Channels[engine.MainChannel] {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids
}
