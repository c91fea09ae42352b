package loop

import (
	"encoding/json"
	"slices"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// Every proposed call passes a gate before it runs: the agent's allow-list,
// its governance policy and the approval its tool needs. A call comes out
// to run, denied (an error result the model reads) or waiting for a
// human's approval (approval.go).

// Outcomes of a gate.
const (
	gateRun  = "run"
	gateDeny = "deny"
	gateAsk  = "ask"
)

// gate is one proposed call and what is to happen to it.
type gate struct {
	Call    model.ToolCall `json:"call"`
	Outcome string         `json:"outcome"`
	// Denial is the error result of a denied call; Why says why a call
	// waits for approval.
	Denial string `json:"denial,omitempty"`
	Why    string `json:"why,omitempty"`
	// Effect is how a call found in doubt was resolved (doubt.go).
	Effect *gateEffect `json:"effect,omitempty"`
	// forbidden: the tool is not the agent's (not persisted: a resumed
	// gate was vetted already).
	forbidden bool
}

// verdictEvent is the payload of a governance event.
type verdictEvent struct {
	Iteration int             `json:"iteration"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Verdict is a policy's allow, deny or ask, or a human's (or the
	// approval timeout's) approve, reject or edit.
	Verdict string `json:"verdict"`
	// Source: rule, governor, default (no rule, no governor), approval
	// (the tool needs it), user, timeout.
	Source string `json:"source"`
	Mode   string `json:"mode,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Enforced is false for an audit-mode verdict that blocks nothing.
	Enforced bool `json:"enforced"`
}

// vet passes iteration n's calls through their gates. The policy judges
// all of them first — concurrently when a governor may be asked, so that a
// turn of N calls waits for one review, not N in a row — and the verdicts
// are then recorded in the calls' order.
func (x *execution) vet(n int, calls []model.ToolCall) []gate {
	js := x.judgeAll(n, calls)
	gates := make([]gate, len(calls))
	for i, c := range calls {
		gates[i] = x.gateCall(n, c, false, js[i])
	}
	return gates
}

// judgeAll is the policy's judgement of each allowed call (nil for the
// others, and for all when there is no policy).
func (x *execution) judgeAll(n int, calls []model.ToolCall) []*judgement {
	js := make([]*judgement, len(calls))
	pol := x.e.policy
	if pol == nil {
		return js
	}
	judge := func(i int) {
		if c := calls[i]; x.allows(c.Name) {
			j := pol.judge(&x.work, x.proposal(n, c))
			js[i] = &j
		}
	}
	if pol.governor == nil || len(calls) == 1 {
		for i := range calls {
			judge(i)
		}
		return js
	}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { judge(i) })
	}
	wg.Wait()
	return js
}

// proposal is call c of iteration n as the policy sees it.
func (x *execution) proposal(n int, c model.ToolCall) Proposal {
	return Proposal{RunID: x.run.ID, AgentID: x.actor, Iteration: n, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments}
}

// vetCall gates one call; approved says a human approved it already (an
// edit is judged again, but not asked about again).
func (x *execution) vetCall(n int, c model.ToolCall, approved bool) gate {
	var j *judgement
	if pol := x.e.policy; pol != nil && x.allows(c.Name) {
		v := pol.judge(&x.work, x.proposal(n, c))
		j = &v
	}
	return x.gateCall(n, c, approved, j)
}

// gateCall gates call c given the policy's judgement of it (nil: no
// policy) and records the verdicts.
func (x *execution) gateCall(n int, c model.ToolCall, approved bool, jp *judgement) gate {
	g := gate{Call: c, Outcome: gateRun}
	if !x.allows(c.Name) {
		g.Outcome, g.Denial, g.forbidden = gateDeny, x.e.denied(c.Name).Content, true
		return g
	}
	if pol := x.e.policy; pol != nil && jp != nil {
		j := *jp
		enforced := pol.mode == GovernanceEnforce
		x.publishVerdict(verdictEvent{Iteration: n, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments, Verdict: j.verdict,
			Source: j.source, Mode: pol.mode, Rule: j.rule, Reason: j.reason, Enforced: enforced})
		if enforced && j.verdict == VerdictDeny {
			g.Outcome, g.Denial = gateDeny, j.deniedText()
			return g
		}
		if enforced && j.verdict == VerdictAsk && !approved {
			g.Outcome, g.Why = gateAsk, "policy rule "+j.rule
		}
	}
	if g.Outcome == gateRun && !approved && x.e.needsApproval(c.Name) {
		g.Outcome, g.Why = gateAsk, "the tool requires approval"
		x.publishVerdict(verdictEvent{Iteration: n, CallID: c.ID, Tool: c.Name, Arguments: c.Arguments,
			Verdict: VerdictAsk, Source: "approval", Enforced: true})
	}
	return g
}

// needsApproval reports whether calls of tool name wait for a human: the
// tool's own flag, or the agent's configuration.
func (e *Engine) needsApproval(name string) bool {
	if slices.Contains(e.cfg.ApprovalTools, name) {
		return true
	}
	if e.cfg.Tools == nil {
		return false // an agent without tools, offered a client's
	}
	t, ok := e.cfg.Tools.Get(name)
	return ok && t.Flags().RequiresApproval()
}

// publishVerdict logs a governance event; like every publish, a failure is
// an observability problem only.
func (x *execution) publishVerdict(v verdictEvent) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	x.publish(engine.Verdict{Actor: x.actor, Payload: b})
}

// result is the result a denied gate gives its call.
func (g gate) result() tool.Result {
	err := errdefs.Forbiddenf("%s", g.Denial)
	return tool.Result{Content: g.Call.Name + ": " + g.Denial, IsError: true, Err: err}
}
