package loop

import (
	"errors"
	"strconv"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// toolDetail is the Detail of a tool step's events.
type toolDetail struct {
	Iteration int    `json:"iteration"`
	Tool      string `json:"tool"`
	CallID    string `json:"call_id"`
}

// IdempotencyKey is the key of a tool call: the same run, iteration and
// call id always give the same key, so a tool (or the host) can recognise
// a call replayed after a crash. It travels as tool.Call.IdempotencyKey
// and reaches the tool through tool.CallFromContext.
func IdempotencyKey(runID string, iteration int, callID string) string {
	return runID + ":" + strconv.Itoa(iteration) + ":" + callID
}

// runTools runs iteration n's calls, as their gates say, through the
// registry — concurrently where the tools allow — and appends one tool
// message per call, in call order. A denied call (a tool outside the
// allow-list, a policy's deny, a rejected approval) is answered with an
// error result and never reaches the registry. Tool failures, interrupts
// and cancellation all become results: this never fails the run. The step
// events bracket the batch (every start, then every outcome), since
// ExecuteAll reports results only once all are in. A call a tool stopped
// with an interrupt gets no result: the interrupt is returned and parks
// the run (parked.go).
func (x *execution) runTools(n int, gates []gate) error {
	results := make([]tool.Result, len(gates))
	var dispatch, client []tool.Call
	var dispatched, clientAt []int // index in gates of each dispatch and client entry
	for i, g := range gates {
		c := g.Call
		x.publish(engine.StepStarted{Step: x.step(StepKindTool, toolDetail{Iteration: n, Tool: c.Name, CallID: c.ID})})
		if g.forbidden {
			results[i] = x.e.denied(c.Name)
			continue
		}
		if g.Outcome != gateRun {
			results[i] = g.result()
			continue
		}
		call := tool.CallOf(c)
		call.IdempotencyKey = x.callKey(n, c)
		if _, ok := x.client[c.Name]; ok && !x.e.allowed[c.Name] {
			client, clientAt = append(client, call), append(clientAt, i)
			continue
		}
		dispatch = append(dispatch, call)
		dispatched = append(dispatched, i)
	}
	if x.hasRecorded(gates) {
		if err := x.runRecorded(n, gates, dispatch, dispatched, results); err != nil {
			return err
		}
	} else if len(dispatch) > 0 {
		out := x.e.cfg.Tools.ExecuteAll(engine.WithRunID(engine.WithHost(&x.work, x.host), x.run.ID), dispatch)
		for j, r := range out {
			results[dispatched[j]] = r
		}
	}
	if len(client) > 0 {
		for j, r := range x.askClient(client) {
			results[clientAt[j]] = r
		}
	}
	parked := x.parkedBy(results)
	for i, g := range gates {
		c, r := g.Call, results[i]
		if parked != nil && parks(r) {
			continue // goes on when the run resumes
		}
		step := x.step(StepKindTool, toolDetail{Iteration: n, Tool: c.Name, CallID: c.ID})
		if r.IsError {
			x.publish(engine.StepFailed{Step: step, Err: resultErr(c.Name, r)})
		} else {
			x.publish(engine.StepCompleted{Step: step})
		}
		x.appendResult(c, r, false)
	}
	return parked
}

// abandonCalls answers calls that will never run (the budget is spent or
// the run was interrupted before dispatch) with error results naming why,
// so every tool call on the board keeps its result.
func (x *execution) abandonCalls(calls []model.ToolCall, why error) {
	for _, c := range calls {
		x.appendResult(c, tool.Result{
			Content: c.Name + ": not run: " + why.Error(),
			IsError: true,
		}, true)
	}
}

// appendResult appends c's result to the main channel and publishes it.
func (x *execution) appendResult(c model.ToolCall, r tool.Result, cancelled bool) {
	tr := r.ToolResult(tool.Call{ID: c.ID, Name: c.Name})
	x.appendMessage(toolMessage(tr))
	x.publish(engine.ToolResult{Actor: x.actor, ToolCallID: tr.ToolCallID, Name: tr.Name,
		Content: tr.Content, IsError: tr.IsError, Cancelled: cancelled})
}

// denied is the result of a call to a tool the agent may not use. It
// reads like the registry's unknown-tool result, naming what the model
// may call instead.
func (e *Engine) denied(name string) tool.Result {
	avail := "none"
	if len(e.cfg.ToolNames) > 0 {
		avail = strings.Join(e.cfg.ToolNames, ", ")
	}
	err := errdefs.Forbiddenf("tool %q is not available to this agent (available: %s)", name, avail)
	return tool.Result{Content: name + ": " + err.Error(), IsError: true, Err: err}
}

// resultErr is the error a failed call's step.error reports: the
// registry's classified cause, else the tool's own words.
func resultErr(name string, r tool.Result) error {
	if r.Err != nil {
		return r.PublicErr()
	}
	if r.Content == "" {
		return errors.New(name + ": failed")
	}
	return errors.New(r.Content)
}
