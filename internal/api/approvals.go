package api

import (
	"errors"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
)

// approvalMessage is the user message that answers an approval prompt: a
// data part {"approvals": […]}, the shape A2A clients send as well. The
// list is checked here so a malformed one is a 400 naming the entry; the
// runtime refuses decisions on calls the prompt does not wait for (409).
func (b sendBody) approvalMessage() (model.Message, error) {
	if b.Message != nil || b.Text != "" {
		return model.Message{}, fieldErr("approvals", errors.New(`give "approvals" alone, without "message" or "text"`))
	}
	part, err := model.DataPart(struct {
		Approvals []engine.ApprovalAnswer `json:"approvals"`
	}{b.Approvals})
	if err != nil {
		return model.Message{}, err
	}
	parts := []model.Part{part}
	if _, _, err := engine.ApprovalAnswers(parts); err != nil {
		return model.Message{}, err
	}
	return model.Message{Role: model.RoleUser, Parts: parts}, nil
}

// pendingApprovals are the calls input-required task t waits to have
// approved, from its prompt.
func pendingApprovals(t run.Task) []engine.ApprovalRequest {
	if t.State != run.StateInputRequired || t.StatusMessage == nil {
		return nil
	}
	return engine.PendingApprovals(t.StatusMessage.Parts)
}
