package goal

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// approvalTool names the pending call of an approval prompt: running the
// plan, whose arguments are the workflow.
const approvalTool = "run_workflow"

// approve asks a person about the plan until they approve it, edit it
// into a valid one, or reject it. Each question is preceded by a
// checkpoint that holds the plan, so the answer resumes the run (in a
// new attempt, whose AskUser returns it) without planning again.
func (x *execution) approve() error {
	for x.st.Phase == phaseApproval {
		if x.st.Revision == 0 {
			x.st.Revision = 1
		}
		if err := x.checkpoint(stepApproval, nil); err != nil {
			return err
		}
		prompt, err := x.approvalPrompt()
		if err != nil {
			return err
		}
		reply, err := x.host.AskUser(x.ctx, prompt)
		if err != nil {
			return fmt.Errorf("goal agent %q: waiting for approval of the plan: %w", x.actor, err)
		}
		if err := x.decide(reply); err != nil {
			return err
		}
	}
	return nil
}

// callID names the pending call of the current plan revision.
func (x *execution) callID() string { return fmt.Sprintf("plan-%d", x.st.Revision) }

// approvalPrompt is the question: the plan as YAML in words, and the
// approval data part (engine.ApprovalPromptPart) with one pending call.
func (x *execution) approvalPrompt() (engine.UserPrompt, error) {
	var b strings.Builder
	if x.st.Retry != "" {
		b.WriteString(x.st.Retry + "\n\n")
	}
	fmt.Fprintf(&b, "Approve this plan before it runs:\n\n```yaml\n%s```\n", yamlOf(x.st.Plan))
	fmt.Fprintf(&b, "Answer \"approve\" or \"reject\", or {\"approvals\": [{\"call_id\": %q, \"decision\": \"approve\" | \"reject\" | \"edit\", "+
		"\"arguments\": <the changed workflow, as JSON>, \"reason\": …}]}.", x.callID())
	req := engine.ApprovalRequest{CallID: x.callID(), Tool: approvalTool, Arguments: x.st.Plan, Reason: "the goal agent's plan"}
	data, err := engine.ApprovalPromptPart([]engine.ApprovalRequest{req}, time.Time{})
	if err != nil {
		return engine.UserPrompt{}, err
	}
	return engine.UserPrompt{Parts: []model.Part{model.TextPart(b.String()), data}, Source: x.actor,
		Metadata: map[string]string{"kind": "approval"}}, nil
}

// decide applies a reply: approve moves on to running, reject ends the
// run, an edit is checked (a valid plan runs, an invalid one is asked
// about again with its problems), and an answer not understood is asked
// again with the reason.
func (x *execution) decide(reply engine.UserReply) error {
	x.st.Retry = ""
	a, ok, why := x.answer(reply)
	if !ok {
		x.st.Retry = why
		return nil
	}
	x.verdict(a)
	switch a.Decision {
	case engine.DecisionReject:
		msg := "the plan was rejected"
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		return errdefs.Validationf("goal agent %q: %s", x.actor, msg)
	case engine.DecisionEdit:
		doc, err := x.e.check(a.Arguments)
		if err != nil {
			x.st.Revision++
			x.st.Retry = "The edited plan is not valid:\n" + problemLines(err)
			return nil
		}
		x.st.Plan = doc
	}
	x.st.Phase = phaseRunning
	x.publishPlan()
	return nil
}

// answer reads the decision on the pending call from a reply: an
// approvals data part, or "approve"/"reject" in words; ok is false, with
// the reason, when it says neither.
func (x *execution) answer(reply engine.UserReply) (a engine.ApprovalAnswer, ok bool, why string) {
	answers, found, err := engine.ApprovalAnswers(reply.Parts)
	switch {
	case err != nil:
		return a, false, "Your answer was not understood: " + err.Error()
	case !found:
		d, ok := wordDecision(reply.Text())
		if !ok {
			return a, false, fmt.Sprintf("Your answer %q was not understood.", reply.Text())
		}
		return engine.ApprovalAnswer{CallID: x.callID(), Decision: d}, true, ""
	}
	for _, a := range answers {
		if a.CallID == x.callID() {
			return a, true, ""
		}
	}
	return a, false, fmt.Sprintf("Your answer decides no pending call: the plan waits as call %q.", x.callID())
}

// verdict records a person's decision on the plan (a governance event).
func (x *execution) verdict(a engine.ApprovalAnswer) {
	v := map[string]any{"call_id": a.CallID, "tool": approvalTool, "verdict": a.Decision, "source": "user", "enforced": true}
	if a.Reason != "" {
		v["reason"] = a.Reason
	}
	if b, err := json.Marshal(v); err == nil {
		x.publish(engine.Verdict{Actor: x.actor, Payload: b})
	}
}

// wordDecision reads a typed answer.
func wordDecision(text string) (string, bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!")) {
	case "approve", "approved", "yes", "y", "ok", "run it":
		return engine.DecisionApprove, true
	case "reject", "rejected", "no", "n":
		return engine.DecisionReject, true
	}
	return "", false
}
