package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Approvals: an engine that wants a human to approve tool calls before
// they run asks with Host.AskUser, whose prompt carries a data part
// {"pending_approvals": [ApprovalRequest…], "deadline": …}; the answer is a
// reply whose data part is {"approvals": [ApprovalAnswer…]}. The shapes live
// here because three layers read them: the engine that asks, the runtime
// that refuses an answer to a call that is not pending, and the REST face
// that shows a parked run's pending calls.

// Decisions an ApprovalAnswer may carry.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
	DecisionEdit    = "edit"
	// DecisionSkip answers a call in doubt with Result, without running
	// it (effects.go); approve retries it with its key, reject fails the
	// run.
	DecisionSkip = "skip"
)

// ApprovalRequest is one proposed tool call waiting for a decision.
type ApprovalRequest struct {
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason says why it needs approval (the tool's flag, a rule).
	Reason string `json:"reason,omitempty"`
	// InDoubt marks a call found in doubt after a crash, with its effect
	// key: approve retries it, skip answers it with a result, reject fails
	// the run.
	InDoubt   bool   `json:"in_doubt,omitempty"`
	EffectKey string `json:"effect_key,omitempty"`
}

// ApprovalAnswer is the decision on one call: approve, reject (Reason is
// what the model reads) or edit (Arguments replace the proposed ones).
type ApprovalAnswer struct {
	CallID    string          `json:"call_id"`
	Decision  string          `json:"decision"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	// Result is what a skipped call in doubt answers.
	Result string `json:"result,omitempty"`
}

// approvalPrompt is the data part of an approval prompt.
type approvalPrompt struct {
	Pending  []ApprovalRequest `json:"pending_approvals"`
	Deadline string            `json:"deadline,omitempty"`
}

// ApprovalPromptPart is the data part of a prompt asking for pending, with
// the deadline (zero: none) under PromptDeadlineKey.
func ApprovalPromptPart(pending []ApprovalRequest, deadline time.Time) (model.Part, error) {
	p := approvalPrompt{Pending: pending}
	if !deadline.IsZero() {
		p.Deadline = deadline.UTC().Format(time.RFC3339Nano)
	}
	return model.DataPart(p)
}

// PendingApprovals returns the calls a prompt (its parts) waits for, from
// its pending_approvals data part; nil when it is no approval prompt.
func PendingApprovals(parts []model.Part) []ApprovalRequest {
	for _, p := range parts {
		if p.Type != model.PartData {
			continue
		}
		var ap approvalPrompt
		if json.Unmarshal(p.Data, &ap) == nil && ap.Pending != nil {
			return ap.Pending
		}
	}
	return nil
}

// ApprovalAnswers returns the decisions of a reply (its parts), from its
// {"approvals": […]} data part. found is false when the reply has none; a
// malformed list is a Validation error naming the entry at fault.
func ApprovalAnswers(parts []model.Part) (answers []ApprovalAnswer, found bool, err error) {
	for _, p := range parts {
		if p.Type != model.PartData {
			continue
		}
		var body struct {
			Approvals *[]ApprovalAnswer `json:"approvals"`
		}
		if json.Unmarshal(p.Data, &body) != nil || body.Approvals == nil {
			continue
		}
		return *body.Approvals, true, checkAnswers(*body.Approvals)
	}
	return nil, false, nil
}

func checkAnswers(answers []ApprovalAnswer) error {
	if len(answers) == 0 {
		return errdefs.WithField("approvals", errdefs.Validationf("empty: give one decision per pending call"))
	}
	seen := make(map[string]bool, len(answers))
	for i, a := range answers {
		field := fmt.Sprintf("approvals[%d]", i)
		switch {
		case a.CallID == "":
			return errdefs.WithField(field+".call_id", errdefs.Validationf("required"))
		case seen[a.CallID]:
			return errdefs.WithField(field+".call_id", errdefs.Validationf("call %q is answered twice", a.CallID))
		case a.Decision != DecisionApprove && a.Decision != DecisionReject && a.Decision != DecisionEdit && a.Decision != DecisionSkip:
			return errdefs.WithField(field+".decision", errdefs.Validationf("%q: want approve, reject, edit or skip", a.Decision))
		case a.Decision != DecisionSkip && a.Result != "":
			return errdefs.WithField(field+".result", errdefs.Validationf("only a skip carries a result"))
		case a.Decision == DecisionEdit && !isJSONObject(a.Arguments):
			return errdefs.WithField(field+".arguments", errdefs.Validationf("an edit needs the new arguments, a JSON object"))
		case a.Decision != DecisionEdit && len(a.Arguments) > 0:
			return errdefs.WithField(field+".arguments", errdefs.Validationf("only an edit carries arguments"))
		}
		seen[a.CallID] = true
	}
	return nil
}

func isJSONObject(b json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return len(b) > 0 && json.Unmarshal(b, &obj) == nil && obj != nil
}

// CheckApprovalAnswer refuses a reply to an approval prompt (prompt: the
// parked run's status message parts) that decides a call the prompt does
// not wait for — one resolved already, by an earlier answer or a timeout —
// with a Conflict naming it; a malformed list is a Validation error. A
// reply without approvals, or a prompt that is no approval prompt, passes.
func CheckApprovalAnswer(prompt, reply []model.Part) error {
	pending := PendingApprovals(prompt)
	answers, found, err := ApprovalAnswers(reply)
	if !found || pending == nil {
		return err
	}
	if err != nil {
		return err
	}
	ids := make([]string, len(pending))
	for i, p := range pending {
		ids[i] = p.CallID
	}
	for i, a := range answers {
		ok := false
		for _, id := range ids {
			ok = ok || id == a.CallID
		}
		if !ok {
			return errdefs.WithField(fmt.Sprintf("approvals[%d].call_id", i),
				errdefs.Conflictf("call %q is not waiting for approval (resolved already, or unknown); pending: %q", a.CallID, ids))
		}
	}
	return nil
}
