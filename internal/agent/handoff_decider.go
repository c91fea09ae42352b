package agent

import (
	"context"

	"agentd/internal/model"
)

// HandoffDecider returns a Decider that finds the first hand-off tool call
// among every message the turn produced — tool rounds included, not only
// the final assistant message, since a model usually calls the hand-off
// tool and then says something more — and answers
//
//	FinalizeDecision{Reason: "handoff:<id>", State: {HandoffStateKey: HandoffEvent}}
//
// A call whose tool result in the same turn is an error (bad arguments, a
// failing OnInvoke) is not a hand-off and scanning moves on; a call without
// a result in the turn still counts. Later hand-off calls are ignored.
// It does not discard output: whether the "transferring you now" text
// belongs in the transcript is a separate Decider's call. It panics when a
// Handoff has an empty ToAgentID, like HandoffTool.
func HandoffDecider(hs []Handoff) Decider {
	byName := make(map[string]Handoff, len(hs))
	for _, h := range hs {
		if h.ToAgentID == "" {
			panic("agent: HandoffDecider: Handoff.ToAgentID is empty")
		}
		if _, dup := byName[h.Name()]; !dup {
			byName[h.Name()] = h
		}
	}
	return handoffDecider{byName: byName}
}

// handoffDecider is immutable after construction, hence safe for
// concurrent use.
type handoffDecider struct {
	byName map[string]Handoff
}

func (d handoffDecider) BeforeFinalize(_ context.Context, _ RunInfo, _ *Request, res *Result) (FinalizeDecision, error) {
	if res == nil || len(d.byName) == 0 {
		return FinalizeDecision{}, nil
	}
	failed := failedCalls(res.Messages)
	for _, m := range res.Messages {
		for _, p := range m.Parts {
			if p.Type != model.PartToolCall || p.ToolCall == nil {
				continue
			}
			call := p.ToolCall
			h, ok := d.byName[call.Name]
			if !ok || (call.ID != "" && failed[call.ID]) {
				continue
			}
			// Arguments that do not decode would have failed the tool; with
			// no result to say so, the hand-off stands without them.
			args, _ := decodeHandoffArgs(call.Arguments)
			ev := HandoffEvent{ToAgentID: h.ToAgentID, ToolName: call.Name, ToolCallID: call.ID, Args: args}
			return FinalizeDecision{
				Reason: HandoffFinalizeReason + h.ToAgentID,
				State:  map[string]any{HandoffStateKey: ev},
			}, nil
		}
	}
	return FinalizeDecision{}, nil
}

// failedCalls returns the ids of the tool calls whose result in msgs is an
// error.
func failedCalls(msgs []model.Message) map[string]bool {
	var failed map[string]bool
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == model.PartToolResult && p.ToolResult != nil && p.ToolResult.IsError {
				if failed == nil {
					failed = make(map[string]bool)
				}
				failed[p.ToolResult.ToolCallID] = true
			}
		}
	}
	return failed
}

// HandoffFromResult returns the HandoffEvent HandoffDecider recorded in
// res, or false when the turn handed off nowhere (or the slot holds
// something else). It accepts a nil res.
//
//	if ev, ok := agent.HandoffFromResult(res); ok {
//		return dispatch(ev.ToAgentID, ev.Args.Note)
//	}
func HandoffFromResult(res *Result) (HandoffEvent, bool) {
	if res == nil {
		return HandoffEvent{}, false
	}
	switch ev := res.State[HandoffStateKey].(type) {
	case HandoffEvent:
		return ev, true
	case *HandoffEvent:
		if ev != nil {
			return *ev, true
		}
	}
	return HandoffEvent{}, false
}
