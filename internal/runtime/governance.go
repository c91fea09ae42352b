package runtime

import (
	"encoding/json"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// Governance and approvals of tool calls (the loop engine's gates): each
// verdict on a proposed call is a governance event of the run's log, and
// an answer to an approval prompt must decide only calls that prompt waits
// for — a second answer to a resolved call is a Conflict, so that a call
// can never be decided twice.

// EventGovernance is a verdict on a proposed tool call: a policy's allow,
// deny or ask, or a human's (or the approval timeout's) approve, reject or
// edit.
const EventGovernance = "governance"

// GovernanceData is the body of a governance event: the step actor and the
// engine's verdict (call_id, tool, arguments, verdict, source, mode, rule,
// reason, enforced).
type GovernanceData struct {
	Actor   string          `json:"actor"`
	Payload json.RawMessage `json:"payload"`
}

// governanceBody encodes a verdict's body.
func governanceBody(actor string, payload json.RawMessage) (json.RawMessage, error) {
	var probe struct {
		CallID  string `json:"call_id"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil || probe.CallID == "" || probe.Verdict == "" {
		return nil, errdefs.Validationf("publish governance: payload must be {\"call_id\":…,\"verdict\":…}: %v", err)
	}
	return encodeBody(GovernanceData{Actor: actor, Payload: payload})
}

// checkApprovals refuses an answer to parked task t that decides a call
// its approval prompt does not wait for (engine.CheckApprovalAnswer).
func checkApprovals(t run.Task, answer model.Message) error {
	if t.StatusMessage == nil {
		return nil
	}
	return engine.CheckApprovalAnswer(t.StatusMessage.Parts, answer.Parts)
}

// verdict files a governance event under its call, for the call's step.
func (b *trajectoryBuilder) verdict(ev run.Event) {
	var d GovernanceData
	if json.Unmarshal(ev.Data, &d) != nil {
		return
	}
	var v struct {
		CallID    string          `json:"call_id"`
		Verdict   string          `json:"verdict"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(d.Payload, &v) != nil || v.CallID == "" {
		return
	}
	if c, ok := b.calls[v.CallID]; ok && v.Verdict == engine.DecisionEdit {
		c.Arguments = v.Arguments // what runs is what the user edited
		b.calls[v.CallID] = c
	}
	if b.verdicts == nil {
		b.verdicts = map[string][]json.RawMessage{}
	}
	b.verdicts[v.CallID] = append(b.verdicts[v.CallID], d.Payload)
}
