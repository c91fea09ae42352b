package agentproto

import (
	"encoding/json"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
)

// resumeMessage turns command.resume into the user message that answers
// the interrupted run t: a string answers a question; an approval prompt
// takes {"approvals": [...]} as the REST face does, or the Agent Inbox's
// answers ({"type": "accept" | "ignore" | "edit" | "response"}, alone or in
// a list), or {"decision": "approve" | "reject"}, applied to every pending
// call; any other JSON value travels as a data part.
func resumeMessage(t run.Task, resume json.RawMessage) (model.Message, error) {
	var text string
	if err := json.Unmarshal(resume, &text); err == nil {
		return model.NewText(model.RoleUser, text), nil
	}
	var pending []engine.ApprovalRequest
	if t.StatusMessage != nil {
		pending = engine.PendingApprovals(t.StatusMessage.Parts)
	}
	if len(pending) > 0 {
		answers, err := approvalAnswers(pending, resume)
		if err != nil {
			return model.Message{}, err
		}
		part, err := model.DataPart(map[string]any{"approvals": answers})
		if err != nil {
			return model.Message{}, err
		}
		parts := []model.Part{part}
		if _, _, err := engine.ApprovalAnswers(parts); err != nil {
			return model.Message{}, badInput("command.resume", "%v", err)
		}
		return model.Message{Role: model.RoleUser, Parts: parts}, nil
	}
	part := model.Part{Type: model.PartData, Data: resume, MediaType: "application/json"}
	return model.Message{Role: model.RoleUser, Parts: []model.Part{part}}, nil
}

// inboxAnswer is one of the Agent Inbox's answers, or a plain decision.
type inboxAnswer struct {
	Type     string          `json:"type"`
	Decision string          `json:"decision"`
	Args     json.RawMessage `json:"args"`
}

// approvalAnswers decides every pending call as resume says.
func approvalAnswers(pending []engine.ApprovalRequest, resume json.RawMessage) ([]engine.ApprovalAnswer, error) {
	var explicit struct {
		Approvals []engine.ApprovalAnswer `json:"approvals"`
	}
	if err := json.Unmarshal(resume, &explicit); err == nil && explicit.Approvals != nil {
		return explicit.Approvals, nil
	}
	var list []inboxAnswer
	if err := json.Unmarshal(resume, &list); err != nil {
		var one inboxAnswer
		if err := json.Unmarshal(resume, &one); err != nil {
			return nil, badInput("command.resume", "a run waiting for approval takes a string, {\"approvals\": [...]}, {\"type\": \"accept\" | \"ignore\" | \"edit\" | \"response\"} or {\"decision\": \"approve\" | \"reject\"}")
		}
		list = []inboxAnswer{one}
	}
	out := make([]engine.ApprovalAnswer, 0, len(pending))
	for i, p := range pending {
		a := list[min(i, len(list)-1)]
		ans, err := decide(p, a)
		if err != nil {
			return nil, err
		}
		out = append(out, ans)
	}
	return out, nil
}

func decide(p engine.ApprovalRequest, a inboxAnswer) (engine.ApprovalAnswer, error) {
	ans := engine.ApprovalAnswer{CallID: p.CallID}
	switch strings.ToLower(a.Type + a.Decision) {
	case "accept", "approve":
		ans.Decision = engine.DecisionApprove
	case "ignore", "reject":
		ans.Decision, ans.Reason = engine.DecisionReject, "rejected by the user"
	case "response":
		ans.Decision, ans.Reason = engine.DecisionReject, string(a.Args)
		var s string
		if json.Unmarshal(a.Args, &s) == nil {
			ans.Reason = s
		}
	case "edit":
		var edit struct {
			Args json.RawMessage `json:"args"`
		}
		if json.Unmarshal(a.Args, &edit) != nil || len(edit.Args) == 0 {
			return ans, badInput("command.resume.args.args", "an edit gives the call's new arguments as args.args")
		}
		ans.Decision, ans.Arguments = engine.DecisionEdit, edit.Args
	default:
		return ans, badInput("command.resume.type", "%q: want accept, ignore, edit or response", a.Type+a.Decision)
	}
	return ans, nil
}
