package agui

import (
	"encoding/json"
	"fmt"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Interrupt reasons.
const (
	ReasonApproval = "tool_approval"
	ReasonInput    = "input_required"
)

// approvalSchema is the answer an approval interrupt expects.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision":  map[string]any{"type": "string", "enum": []string{engine.DecisionApprove, engine.DecisionReject, engine.DecisionEdit}},
		"arguments": map[string]any{"type": "object", "description": "the edited arguments (decision edit)"},
		"reason":    map[string]any{"type": "string"},
	},
}

// answerSchema is the answer a question expects when the run gave none.
var answerSchema = map[string]any{"type": "string"}

// outcomeOf is the outcome of a run parked on prompt: success naming the
// frontend tool calls it waits for, or one interrupt per pending approval,
// or one for the question.
func outcomeOf(runID string, prompt *model.Message, schema json.RawMessage) *Outcome {
	if prompt == nil {
		prompt = &model.Message{}
	}
	if calls := clientToolCalls(prompt.Parts); len(calls) > 0 {
		ids := make([]string, len(calls))
		for i, c := range calls {
			ids[i] = ToolCallIDOf(runID, c.ID)
		}
		return &Outcome{Type: OutcomeSuccess, PendingToolCallIDs: ids}
	}
	return &Outcome{Type: OutcomeInterrupt, Interrupts: interruptsOf(runID, *prompt, schema)}
}

// interruptsOf lists what a run parked on prompt waits for.
func interruptsOf(runID string, prompt model.Message, schema json.RawMessage) []Interrupt {
	if reqs := engine.PendingApprovals(prompt.Parts); len(reqs) > 0 {
		out := make([]Interrupt, len(reqs))
		for i, r := range reqs {
			id := ToolCallIDOf(runID, r.CallID)
			msg := fmt.Sprintf("Approve %s %s?", r.Tool, r.Arguments)
			if r.Reason != "" {
				msg += " (" + r.Reason + ")"
			}
			out[i] = Interrupt{ID: id, Reason: ReasonApproval, Message: msg, ToolCallID: id, ResponseSchema: approvalSchema}
		}
		return out
	}
	rs := answerSchema
	var given map[string]any
	if len(schema) > 0 && json.Unmarshal(schema, &given) == nil && given != nil {
		rs = given
	}
	return []Interrupt{{ID: questionID(runID, prompt), Reason: ReasonInput, Message: prompt.Text(), ResponseSchema: rs}}
}

func questionID(runID string, prompt model.Message) string {
	if prompt.ID == "" {
		return runID + ".input"
	}
	return runID + ".input." + prompt.ID
}

// ResumeEntry answers one interrupt (RunAgentInput.resume[i]).
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// answer is what resume entries say to a parked run: the message that
// resumes it, or cancel (every question abandoned).
type answer struct {
	message model.Message
	cancel  bool
}

// answerOf reads resume entries against the interrupts of the run runID
// parked on prompt. Every entry must name one of them.
func answerOf(runID string, prompt model.Message, entries []ResumeEntry) (answer, error) {
	pending := interruptsOf(runID, prompt, nil)
	known := map[string]Interrupt{}
	var ids []string
	for _, in := range pending {
		known[in.ID] = in
		ids = append(ids, in.ID)
	}
	var approvals []engine.ApprovalAnswer
	var a answer
	for i, e := range entries {
		field := fmt.Sprintf("resume[%d]", i)
		in, ok := known[e.InterruptID]
		if !ok {
			return a, errdefs.WithField(field+".interruptId", errdefs.Validationf("%q is not a pending interrupt of this thread (pending: %s)", e.InterruptID, strings.Join(ids, ", ")))
		}
		if e.Status != "resolved" && e.Status != "cancelled" {
			return a, errdefs.WithField(field+".status", errdefs.Validationf("must be \"resolved\" or \"cancelled\", got %q", e.Status))
		}
		if in.Reason == ReasonApproval {
			callID, _ := callIDOf(runID, in.ToolCallID)
			ans, err := approvalOf(callID, e)
			if err != nil {
				return a, errdefs.WithField(field+".payload", err)
			}
			approvals = append(approvals, ans)
			continue
		}
		if e.Status == "cancelled" {
			return answer{cancel: true}, nil
		}
		part, err := answerPart(e.Payload)
		if err != nil {
			return a, errdefs.WithField(field+".payload", err)
		}
		a.message = model.Message{Role: model.RoleUser, Parts: []model.Part{part}}
	}
	if approvals != nil {
		part, err := model.DataPart(map[string]any{"approvals": approvals})
		if err != nil {
			return a, err
		}
		a.message = model.Message{Role: model.RoleUser, Parts: []model.Part{part}}
	}
	return a, nil
}

// approvalOf reads a decision: no payload or true approves, false
// rejects, an object says {"decision", "arguments", "reason"}; a cancelled
// entry rejects.
func approvalOf(callID string, e ResumeEntry) (engine.ApprovalAnswer, error) {
	a := engine.ApprovalAnswer{CallID: callID, Decision: engine.DecisionApprove}
	if e.Status == "cancelled" {
		a.Decision, a.Reason = engine.DecisionReject, "cancelled by the user"
		return a, nil
	}
	p := strings.TrimSpace(string(e.Payload))
	switch p {
	case "", "null", "true":
		return a, nil
	case "false":
		a.Decision = engine.DecisionReject
		return a, nil
	}
	var body struct {
		Decision  string          `json:"decision"`
		Arguments json.RawMessage `json:"arguments"`
		Reason    string          `json:"reason"`
	}
	if err := json.Unmarshal(e.Payload, &body); err != nil {
		return a, errdefs.Validationf("an approval answer is true, false or {\"decision\": \"approve\" | \"reject\" | \"edit\", \"arguments\": {…}, \"reason\": …}")
	}
	switch body.Decision {
	case engine.DecisionApprove, engine.DecisionReject, "":
	case engine.DecisionEdit:
		if len(body.Arguments) == 0 || body.Arguments[0] != '{' {
			return a, errdefs.Validationf("decision \"edit\" needs \"arguments\": a JSON object")
		}
	default:
		return a, errdefs.Validationf("decision must be approve, reject or edit, got %q", body.Decision)
	}
	if body.Decision != "" {
		a.Decision = body.Decision
	}
	a.Arguments, a.Reason = body.Arguments, body.Reason
	return a, nil
}

// answerPart is a question's answer: a string, {"answer": "…"}, or any
// other JSON as a data part.
func answerPart(payload json.RawMessage) (model.Part, error) {
	var s string
	if json.Unmarshal(payload, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return model.Part{}, errdefs.Validationf("the answer must not be blank")
		}
		return model.TextPart(s), nil
	}
	var obj struct {
		Answer *string `json:"answer"`
	}
	if json.Unmarshal(payload, &obj) == nil && obj.Answer != nil && strings.TrimSpace(*obj.Answer) != "" {
		return model.TextPart(*obj.Answer), nil
	}
	if len(payload) == 0 || string(payload) == "null" {
		return model.Part{}, errdefs.Validationf("required: the answer (a string, or JSON data)")
	}
	return model.Part{Type: model.PartData, Data: payload}, nil
}

// clientToolCalls are the frontend tool calls a prompt waits for, if it is
// a frontend tool prompt (engine.ClientToolPrompt).
func clientToolCalls(parts []model.Part) []model.ToolCall {
	return engine.PendingClientToolCalls(parts)
}
