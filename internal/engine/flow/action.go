package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// actionError is an action whose tool failed with no on_error route (or
// with on_error: rollback): the flow rolls back, then fails with it.
type actionError struct {
	node, tool string
	err        error
}

func (e *actionError) Error() string {
	return fmt.Sprintf("node %q: tool %s failed: %v", e.node, e.tool, e.err)
}

func (e *actionError) Unwrap() error { return e.err }

// act runs action node n: its tool is called with the node's idempotency
// key (see IdempotencyKey), and the result is saved (save_to,
// tool_result, sys.ans) and routed on. A failure goes to on_error, a
// denial (a Forbidden result) to on_denied; otherwise it is an
// actionError, which rolls the flow back.
func (x *execution) act(n *node) (string, error) {
	args, err := renderArgs(n.do.args, x.templateData())
	if err != nil {
		return "", x.failf(n, "do.args.%v", err)
	}
	if n.approval != nil {
		ok, err := x.approve(n)
		if err != nil {
			return "", err
		}
		if !ok {
			return x.denied(n, errdefs.Forbiddenf("the user did not approve %s", n.do.name))
		}
	}
	key := IdempotencyKey(x.run.ID, n.id, x.st.Visit)
	replay := x.st.Pending != nil && x.st.Pending.Key == key
	x.st.Pending = &pending{Tool: n.do.name, Key: key}
	if err := x.checkpoint(); err != nil {
		return "", err
	}
	if replay {
		if err := x.askDoubt(n, key); err != nil { // doubt.go
			return "", err
		}
	}
	res, intr, got := x.call(n.id, StepKindTool, n.do.name, args, key, replay)
	switch {
	case got:
		return "", &raised{name: signalOf(intr), intr: &intr}
	case x.ctx.Err() != nil:
		return "", x.ctx.Err()
	}
	x.st.Pending = nil
	if res.IsError {
		cause := resultErr(n.do.name, res)
		x.st.Sys["error"] = res.Content
		if errdefs.IsForbidden(res.Err) {
			return x.denied(n, cause)
		}
		if n.onError != "" && n.onError != Rollback {
			return n.onError, nil
		}
		return "", &actionError{node: n.id, tool: n.do.name, err: cause}
	}
	v := resultValue(res)
	x.st.Input, x.st.Sys["ans"] = v, v
	x.st.Context["tool_result"] = toolResult(v, key)
	if n.saveTo != "" {
		x.st.Context[n.saveTo] = v
	}
	if n.undo != nil {
		x.st.Done = append(x.st.Done, done{Node: n.id, Visit: x.st.Visit})
	}
	return x.route(n, v)
}

// denied routes a denied action to on_denied, or fails it.
func (x *execution) denied(n *node, cause error) (string, error) {
	if n.onDenied != "" {
		return n.onDenied, nil
	}
	return "", &actionError{node: n.id, tool: n.do.name, err: cause}
}

// approve asks the user to confirm action n (metadata confirm_msg).
func (x *execution) approve(n *node) (bool, error) {
	q := &node{id: n.id, behaviour: BehaviourInput, content: n.approval, in: input{kind: InputConfirm}, timeout: 0}
	if w := x.st.Waiting; w == nil || w.Node != n.id || w.Visit != x.st.Visit {
		x.st.Waiting = &waiting{Node: n.id, Visit: x.st.Visit, Since: x.e.cfg.Now().UTC()}
		if err := x.checkpoint(); err != nil {
			return false, err
		}
	}
	for reason := ""; ; {
		raw, err := x.answer(q, reason)
		if err != nil {
			return false, err
		}
		v, err := q.in.accept(raw)
		var refused *answerError
		if errors.As(err, &refused) {
			reason = refused.reason
			continue
		}
		x.st.Waiting = nil
		return v == confirmYes, err
	}
}

// call runs one tool call under an interruptible context, publishing its
// step events and its call and result deltas under node nodeID's actor.
func (x *execution) call(nodeID, kind, name string, args any, key string, replay bool) (tool.Result, engine.Interrupt, bool) {
	actor := x.actor(nodeID)
	step := engine.Step{RunID: x.run.ID, Actor: actor, Kind: kind, Detail: toolDetail{Node: nodeID, Tool: name, IdempotencyKey: key, Replay: replay}}
	x.publish(engine.StepStarted{Step: step})
	raw, err := jsonArgs(args)
	if err != nil {
		res := tool.Result{Content: name + ": arguments: " + err.Error(), IsError: true, Err: errdefs.Validation(err)}
		x.publish(engine.StepFailed{Step: step, Err: res.Err})
		return res, engine.Interrupt{}, false
	}
	shown := raw
	if args == nil {
		shown = nil // a call without arguments shows none
	}
	x.publish(engine.ToolCall{Actor: actor, ID: key, Name: name, Arguments: shown})
	var res tool.Result
	run := func(ctx context.Context) {
		c := tool.Call{ID: key, Name: name, Arguments: raw, IdempotencyKey: key}
		res = x.ledgered(ctx, actor, c, replay) // effects.go
	}
	var intr engine.Interrupt
	var got bool
	if kind == StepKindUndo {
		run(x.ctx) // a compensation runs to its end: a cancel must not leave it half done
	} else {
		intr, got = x.during(run)
	}
	x.publish(engine.ToolResult{Actor: actor, ToolCallID: key, Name: name, Content: res.Content, IsError: res.IsError})
	if res.IsError {
		x.publish(engine.StepFailed{Step: step, Err: resultErr(name, res)})
	} else {
		x.publish(engine.StepCompleted{Step: step})
	}
	return res, intr, got
}

// resultValue is what an action's result is saved as: the tool's
// structured data when it has some (decoded JSON), else its text. Data
// that describes a text (http_get's status and type beside the body it
// fetched) keeps the text under "content" when it has no such field.
func resultValue(r tool.Result) any {
	if len(r.Data) > 0 {
		if v, err := decodeJSON(r.Data); err == nil {
			if m, ok := v.(map[string]any); ok && r.Content != "" && !describes(m, r.Content) {
				m["content"] = r.Content
			}
			return v
		}
	}
	return r.Content
}

// describes reports whether data already holds the text (as one of its
// values, or as its own JSON), so that saving it again would say nothing.
func describes(data map[string]any, text string) bool {
	if _, ok := data["content"]; ok {
		return true
	}
	for _, v := range data {
		if fmt.Sprint(v) == text {
			return true
		}
	}
	b, err := json.Marshal(data)
	return err == nil && (string(b) == text || json.Valid([]byte(text)))
}

// toolResult is the tool_result context value: a map result's fields, or
// {"result": v} for a scalar, with the call id under _id.
func toolResult(v any, id string) map[string]any {
	out := map[string]any{}
	if m, ok := v.(map[string]any); ok {
		for k, e := range m {
			out[k] = e
		}
	} else {
		out["result"] = v
	}
	out["_id"] = id
	return out
}

// resultErr is the error of a failed call: the registry's classified
// cause, else the tool's own words.
func resultErr(name string, r tool.Result) error {
	if r.Err != nil {
		return r.PublicErr()
	}
	if r.Content == "" {
		return errors.New(name + ": failed")
	}
	return errors.New(r.Content)
}
