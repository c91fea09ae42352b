package loop

import (
	"errors"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// Parked tool calls: a tool may stop the run while its call is under way
// — a peer agent called as a tool asks the user a question, and the host
// parks the run (Host.AskUser answering with an interrupt). The tool then
// fails with that interrupt. The loop leaves such a call without a result,
// checkpoints the iteration with the call pending, and ends Execute with
// the interrupt. The attempt that resumes the run runs the pending calls
// of that iteration again, under the same idempotency keys, before asking
// the model anything: a tool that keeps its state under the key (a child
// run) continues where it stopped, the user's answer in hand.

// parkedBy returns the interrupt that parks the run: one a tool failed
// with while the loop itself was not interrupted (then the interrupt is
// the loop's own, handled as any other stop).
func (x *execution) parkedBy(results []tool.Result) error {
	for _, r := range results {
		if parks(r) {
			if err := x.stopped(); err != nil {
				return nil
			}
			return r.Err
		}
	}
	return nil
}

// parks reports whether r is a call stopped by an interrupt.
func parks(r tool.Result) bool {
	var ie engine.InterruptedError
	return r.IsError && r.Err != nil && errors.As(r.Err, &ie)
}

// resumeParked runs the calls iteration n left pending, if the board ends
// with any: those of its last assistant message without a result. It
// checkpoints the iteration again once they all answered.
func (x *execution) resumeParked(n int) error {
	pending := pendingCalls(x.board.ChannelView(engine.MainChannel))
	if len(pending) == 0 {
		return nil
	}
	if err := x.stopped(); err != nil {
		return err
	}
	gates := make([]gate, len(pending))
	for i, c := range pending {
		gates[i] = gate{Call: c, Outcome: gateRun} // vetted before they first ran
	}
	if parked := x.runTools(n, gates); parked != nil {
		return firstErr(x.checkpoint(n), parked)
	}
	return firstErr(x.stopped(), x.checkpoint(n))
}

// A run parked by a tool's call and then canceled: with tools that leave
// something waiting (tool.ParkedCanceler, a peer tool's peer task), the
// loop declares HandlesParkedInterrupts, the host resumes the run for its
// cancel (engine.SignalCancel), and the loop asks each such pending call
// to cancel what it left, runs nothing else — no model turn, no other
// pending call, no call waiting for approval — and ends with the cancel.

// cancelsParked reports whether one of the agent's tools leaves something
// to cancel when its call parks the run.
func (e *Engine) cancelsParked() bool {
	for _, name := range e.cfg.ToolNames {
		if t, ok := e.cfg.Tools.Get(name); ok {
			if _, ok := t.(tool.ParkedCanceler); ok {
				return true
			}
		}
	}
	return false
}

// cancelParked cancels what the calls iteration n left pending left
// waiting, and returns the cancel.
func (x *execution) cancelParked(n int) error {
	// Not x.work: the cancel that resumed the run is pending there, and
	// cancels it at once.
	ctx := engine.WithRunID(engine.WithHost(x.ctx, x.host), x.run.ID)
	for _, c := range pendingCalls(x.board.ChannelView(engine.MainChannel)) {
		if x.e.cfg.Tools == nil {
			break // only a client's tools: nothing here to cancel
		}
		t, ok := x.e.cfg.Tools.Get(c.Name)
		pc, cancels := t.(tool.ParkedCanceler)
		if !ok || !cancels {
			continue
		}
		call := tool.CallOf(c)
		call.IdempotencyKey = x.callKey(n, c)
		// Best effort: the run is canceled whatever the tool manages.
		_ = pc.CancelParked(tool.ContextWithCall(ctx, call))
	}
	return engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserCancel, Detail: "canceled while waiting for input"})
}

// pendingCalls returns the tool calls of the last assistant message of
// msgs that no later message answers.
func pendingCalls(msgs []model.Message) []model.ToolCall {
	i := len(msgs) - 1
	for i >= 0 && msgs[i].Role == model.RoleTool {
		i--
	}
	if i < 0 || msgs[i].Role != model.RoleAssistant {
		return nil
	}
	if partial, _ := msgs[i].Metadata[MetadataPartial].(bool); partial {
		return nil // cut short: its calls were never meant to run
	}
	answered := map[string]bool{}
	for _, m := range msgs[i+1:] {
		for _, p := range m.Parts {
			if p.Type == model.PartToolResult && p.ToolResult != nil {
				answered[p.ToolResult.ToolCallID] = true
			}
		}
	}
	var out []model.ToolCall
	for _, c := range msgs[i].ToolCalls() {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}
