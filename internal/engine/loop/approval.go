package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Approvals: when a gate says ask, the turn's assistant message and its
// gates are held (not on the board, so the board never holds a call
// without its result) in a checkpoint "iter:<n>" whose payload is the
// pending approval, and the loop asks the user through Host.AskUser. The
// runtime parks the run; an answer resumes it from that checkpoint, the
// same AskUser receives the answer, and the calls run (approved or edited)
// or are answered with an error result (rejected). An answer that leaves
// calls undecided is recorded in a new checkpoint and the rest asked
// again. With an approval timeout, the prompt carries its deadline: a host
// that sweeps expired prompts resumes the run and AskUser answers Timeout,
// which rejects every undecided call; an answer that comes after the
// deadline is treated the same.

// pending is a turn waiting for approvals: the checkpoint's payload.
type pending struct {
	Iteration int           `json:"iteration"`
	Message   model.Message `json:"message"`
	Gates     []gate        `json:"gates"`
	Since     time.Time     `json:"since"`
	// Retry says why the previous answer was not understood.
	Retry string `json:"retry,omitempty"`
}

// checkpointPayload is the payload of a loop checkpoint; empty for one
// written after an iteration.
type checkpointPayload struct {
	Approval *pending `json:"approval,omitempty"`
}

// pendingOf returns the approval cp waits for, if any.
func pendingOf(cp *engine.Checkpoint) (*pending, error) {
	if cp == nil || len(cp.Payload) == 0 {
		return nil, nil
	}
	var p checkpointPayload
	if err := json.Unmarshal(cp.Payload, &p); err != nil {
		return nil, errdefs.Validationf("loop checkpoint of run %q at step %q: payload: %v", cp.ExecID, cp.Step, err)
	}
	if a := p.Approval; a != nil && a.Iteration != cp.Iteration {
		return nil, errdefs.Validationf("loop checkpoint of run %q at step %q: its approval is of iteration %d", cp.ExecID, cp.Step, a.Iteration)
	}
	return p.Approval, nil
}

// waiting reports whether a gate still waits for a decision.
func (p *pending) waiting() bool {
	for _, g := range p.Gates {
		if g.Outcome == gateAsk {
			return true
		}
	}
	return false
}

// settle finishes iteration n of p: it waits for the approvals p needs,
// then appends the turn's message (with edited arguments) and runs or
// answers its calls, and checkpoints the iteration.
func (x *execution) settle(n int, p *pending) error {
	if err := x.resolveDoubts(n, p); err != nil { // doubt.go
		return err
	}
	for p.waiting() {
		if err := x.checkpointWith(n, &checkpointPayload{Approval: p}); err != nil {
			return err
		}
		if err := x.askApproval(n, p); err != nil {
			return err
		}
	}
	if err := firstErr(x.failedDoubt(n, p.Gates), x.intend(n, p)); err != nil { // effects.go
		return err
	}
	msg := p.Message
	msg.Parts = make([]model.Part, len(p.Message.Parts))
	copy(msg.Parts, p.Message.Parts)
	k := 0
	for i, part := range msg.Parts {
		if part.Type == model.PartToolCall && part.ToolCall != nil && k < len(p.Gates) {
			c := p.Gates[k].Call
			msg.Parts[i].ToolCall = &c
			k++
		}
	}
	x.appendMessage(msg)
	if halt := x.stopped(); halt != nil {
		calls := make([]model.ToolCall, len(p.Gates))
		for i, g := range p.Gates {
			calls[i] = g.Call
		}
		x.abandonCalls(calls, halt)
	} else if parked := x.runTools(n, p.Gates); parked != nil {
		if le := (*ledgerError)(nil); errors.As(parked, &le) {
			return le.err
		}
		return firstErr(x.checkpoint(n), parked)
	}
	return firstErr(x.stopped(), x.checkpoint(n))
}

// askApproval asks once and applies the answer to p. An error is the
// host's: the run parked (an interrupt) or cannot ask at all.
func (x *execution) askApproval(n int, p *pending) error {
	prompt, deadline, err := x.approvalPrompt(p)
	if err != nil {
		return err
	}
	reply, err := x.host.AskUser(x.ctx, prompt)
	switch {
	case errdefs.IsTimeout(err):
		x.expire(n, p)
		return nil
	case err != nil:
		return fmt.Errorf("loop agent %q: waiting for approval of iteration %d's tool calls: %w", x.actor, n, err)
	case !deadline.IsZero() && !x.e.cfg.Now().Before(deadline):
		x.expire(n, p)
		return nil
	}
	x.decide(n, p, reply)
	return nil
}

// approvalPrompt is the question: a text naming the calls and a data part
// with them (engine.ApprovalPromptPart) and the deadline.
func (x *execution) approvalPrompt(p *pending) (engine.UserPrompt, time.Time, error) {
	var deadline time.Time
	if d := x.e.cfg.ApprovalTimeout; d > 0 {
		deadline = p.Since.Add(d)
	}
	var reqs []engine.ApprovalRequest
	var b strings.Builder
	if p.Retry != "" {
		b.WriteString(p.Retry + "\n\n")
	}
	b.WriteString("Approval needed before these tool calls run:")
	for _, g := range p.Gates {
		if g.Outcome != gateAsk {
			continue
		}
		req := engine.ApprovalRequest{CallID: g.Call.ID, Tool: g.Call.Name, Arguments: g.Call.Arguments, Reason: g.Why}
		if g.Effect != nil && g.Effect.Doubt {
			req.InDoubt, req.EffectKey = true, x.doubtKey(p, g.Call.ID)
		}
		reqs = append(reqs, req)
		fmt.Fprintf(&b, "\n- %s %s (call %s)", g.Call.Name, g.Call.Arguments, g.Call.ID)
	}
	if doubts(p) {
		b.WriteString("\nA call in doubt (" + crashNote + "): \"approve\" retries it with the same effect key, \"skip\" with a \"result\" answers it without running it, \"reject\" fails the run.")
	}
	b.WriteString("\nAnswer \"approve\" or \"reject\" for all, or per call with {\"approvals\": [{\"call_id\": …, \"decision\": \"approve\" | \"reject\" | \"edit\", \"arguments\": {…}, \"reason\": …}]}.")
	data, err := engine.ApprovalPromptPart(reqs, deadline)
	if err != nil {
		return engine.UserPrompt{}, deadline, err
	}
	meta := map[string]string{"kind": "approval"}
	if !deadline.IsZero() {
		meta[engine.PromptDeadlineKey] = deadline.UTC().Format(time.RFC3339Nano)
	}
	return engine.UserPrompt{Parts: []model.Part{model.TextPart(b.String()), data}, Source: x.actor, Metadata: meta}, deadline, nil
}

// expire rejects every undecided call: the approval timed out.
func (x *execution) expire(n int, p *pending) {
	why := fmt.Sprintf("not approved within the approval timeout of %v", x.e.cfg.ApprovalTimeout)
	for i := range p.Gates {
		g := &p.Gates[i]
		if g.Outcome != gateAsk {
			continue
		}
		if g.Effect != nil && g.Effect.Doubt { // unanswered: the run fails (doubt.go)
			g.Outcome = gateRun
			x.resolved(n, g, engine.ResolvedFailed, nil, why)
			continue
		}
		g.Outcome, g.Denial = gateDeny, "rejected: "+why
		x.publishVerdict(verdictEvent{Iteration: n, CallID: g.Call.ID, Tool: g.Call.Name, Arguments: g.Call.Arguments,
			Verdict: engine.DecisionReject, Source: "timeout", Reason: why, Enforced: true})
	}
}

// decide applies a reply to p: per-call decisions from its approvals data
// part, or "approve"/"reject" in words for every undecided call. A reply
// that says neither is asked again with the reason (p.Retry).
func (x *execution) decide(n int, p *pending, reply engine.UserReply) {
	p.Retry = ""
	answers, found, err := engine.ApprovalAnswers(reply.Parts)
	if err != nil {
		p.Retry = "Your answer was not understood: " + err.Error()
		return
	}
	if !found {
		decision, ok := wordDecision(reply.Text())
		if !ok {
			p.Retry = fmt.Sprintf("Your answer %q was not understood.", reply.Text())
			return
		}
		for _, g := range p.Gates {
			if g.Outcome == gateAsk {
				answers = append(answers, engine.ApprovalAnswer{CallID: g.Call.ID, Decision: decision})
			}
		}
	}
	for _, a := range answers {
		for i := range p.Gates {
			g := &p.Gates[i]
			switch {
			case g.Call.ID != a.CallID || g.Outcome != gateAsk:
			case g.Effect != nil && g.Effect.Doubt:
				x.answerDoubt(n, g, a) // doubt.go
			default:
				x.apply(n, g, a)
			}
		}
	}
}

// apply records decision a on gate g.
func (x *execution) apply(n int, g *gate, a engine.ApprovalAnswer) {
	args := g.Call.Arguments
	if a.Decision == engine.DecisionEdit {
		args = a.Arguments
	}
	x.publishVerdict(verdictEvent{Iteration: n, CallID: g.Call.ID, Tool: g.Call.Name, Arguments: args,
		Verdict: a.Decision, Source: "user", Reason: a.Reason, Enforced: true})
	switch a.Decision {
	case engine.DecisionSkip: // answered with the person's result, not run
		g.Outcome, g.Denial = gateDeny, "skipped by the user: "+a.Result
	case engine.DecisionReject:
		g.Outcome, g.Denial = gateDeny, "rejected by the user"
		if a.Reason != "" {
			g.Denial += ": " + a.Reason
		}
	case engine.DecisionEdit:
		c := g.Call
		c.Arguments = a.Arguments
		*g = x.vetCall(n, c, true) // the policy judges what will run
	default:
		g.Outcome = gateRun
	}
}

// wordDecision reads a typed answer that decides every call.
func wordDecision(text string) (string, bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!")) {
	case "approve", "approved", "yes", "y", "ok":
		return engine.DecisionApprove, true
	case "reject", "rejected", "no", "n", "deny":
		return engine.DecisionReject, true
	}
	return "", false
}
