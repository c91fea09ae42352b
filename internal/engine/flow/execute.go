package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// execution is the state of one Execute call. Only the Execute goroutine
// touches it (the interrupt watcher of during reports through its return).
type execution struct {
	e         *Engine
	f         *Flow
	ctx       context.Context
	run       engine.Run
	host      engine.Host
	board     *engine.Board
	agent     string
	intr      <-chan engine.Interrupt
	st        *state
	startedAt time.Time
	// steps counts the nodes executed since the attempt started or the
	// user last answered (see Config.MaxSteps).
	steps int
	// doubts are a person's answers to actions in doubt (doubt.go), by
	// effect key, for this attempt.
	doubts map[string]doubtAnswer
}

// raised is a signal raised while a node executed: an interrupt from the
// host, or the node's input timeout.
type raised struct {
	name string
	intr *engine.Interrupt // nil for timeout
}

func (r *raised) Error() string { return "signal " + r.name }

// loop executes nodes until the flow ends or stops.
func (x *execution) loop() error {
	for {
		if x.st.Ended {
			return x.ended()
		}
		if x.st.Rollback != nil {
			return x.unwind()
		}
		if err := x.ctx.Err(); err != nil {
			return err
		}
		var err error
		if intr, ok := x.poll(); ok {
			// The node is left before it executes: its step says so.
			x.stepStart(x.node())
			err = x.signal(x.node(), &raised{name: signalOf(intr), intr: &intr})
		} else {
			err = x.runNode(x.node())
		}
		if err != nil {
			return err
		}
	}
}

// node is the node the run is at.
func (x *execution) node() *node { return x.f.nodes[x.st.Node] }

// runNode executes n and moves on: to the next node (checkpointed), to
// the end, to a signal handler or into a rollback.
func (x *execution) runNode(n *node) error {
	if x.steps++; x.steps > x.e.cfg.MaxSteps {
		return x.finish(errdefs.BudgetExceededf("flow %s: node %q: %d nodes executed without waiting for an answer (a loop that never ends?)",
			x.f.name, n.id, x.e.cfg.MaxSteps))
	}
	x.stepStart(n)
	next, err := x.exec(n)
	var (
		sig    *raised
		failed *actionError
		park   *parked
	)
	switch {
	case errors.As(err, &park):
		x.stepComplete(n, nodeDetail{Waiting: true})
		return park.err
	case errors.As(err, &sig):
		return x.signal(n, sig)
	case errors.As(err, &failed):
		x.stepError(n, err)
		return x.startRollback(n, failed)
	case err != nil:
		x.stepError(n, err)
		if x.ctx.Err() != nil || errdefs.IsInterrupted(err) {
			return err // cancelled, or parked for input: not an end
		}
		return x.finish(err)
	}
	x.stepComplete(n, nodeDetail{To: next})
	switch next {
	case "":
		return x.finish(nil)
	case Rollback:
		return x.startRollback(n, nil)
	}
	x.st.enter(next)
	return x.checkpoint()
}

// exec runs node n's behaviour and returns the next node ("" for the
// end, Rollback to unwind).
func (x *execution) exec(n *node) (string, error) {
	if err := x.checkContext(n); err != nil {
		return "", err
	}
	switch n.behaviour {
	case BehaviourInput:
		return x.ask(n) // the content is the question
	case BehaviourAction:
		if err := x.say(n); err != nil {
			return "", err
		}
		return x.act(n)
	}
	if err := x.say(n); err != nil {
		return "", err
	}
	return x.route(n, x.st.Input)
}

// checkContext applies default_context, then checks required_context and
// context_schema.
func (x *execution) checkContext(n *node) error {
	for k, v := range n.defaults {
		if _, ok := x.st.Context[k]; !ok {
			x.st.Context[k] = normalise(v)
		}
	}
	for _, k := range n.required {
		if _, ok := x.st.Context[k]; !ok {
			return x.failf(n, "required_context: key %q is missing from the context", k)
		}
	}
	for _, k := range n.schemaKeys {
		v, ok := x.st.Context[k]
		t := n.schema[k]
		if !ok {
			return x.failf(n, "context_schema.%s: key %q is missing from the context (want %s)", k, k, t)
		}
		if !t.check(v) {
			return x.failf(n, "context_schema.%s: want %s, the context holds %s %v", k, t, typeName(v), v)
		}
	}
	return nil
}

// failf is a run failure at node n.
func (x *execution) failf(n *node, format string, args ...any) error {
	return errdefs.Internalf("flow %s: node %q: %s", x.f.name, n.id, fmt.Sprintf(format, args...))
}

// route picks the node after n, given the answer or result in: an
// option's own target, on_denied for a confirm answered no, the first
// transition whose condition holds, then to. A node with conditional
// routes only and no match is an error (an input node asks again).
func (x *execution) route(n *node, in any) (string, error) {
	if s, ok := in.(string); ok {
		if to, ok := n.answerTo[s]; ok {
			return to, nil
		}
		if n.behaviour == BehaviourInput && n.in.kind == InputConfirm && s == confirmNo && n.onDenied != "" {
			return n.onDenied, nil
		}
	}
	vars := x.celVars(in)
	for i, r := range n.transitions {
		if r.cond == nil {
			return r.to, nil
		}
		ok, err := r.cond.eval(vars)
		if err != nil {
			return "", x.failf(n, "transitions[%d]: %v", i, err)
		}
		if ok {
			return r.to, nil
		}
	}
	if n.to != "" || (len(n.transitions) == 0 && len(n.answerTo) == 0) {
		return n.to, nil
	}
	if n.behaviour == BehaviourInput {
		return "", refuse("%v leads nowhere here; please answer again", display(in))
	}
	return "", x.failf(n, "transitions: no condition holds for input %v and there is no fallback", display(in))
}

func display(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v", v)
}

// celVars binds the context, sys, tool_result and input for conditions.
func (x *execution) celVars(in any) map[string]any {
	vars := make(map[string]any, len(x.st.Context)+3)
	for k, v := range x.st.Context {
		vars[k] = v
	}
	vars["context"] = x.st.Context
	vars["sys"] = x.st.Sys
	vars["input"] = in
	return vars
}

// templateData is what content and arguments render over: the context
// with sys beside it.
func (x *execution) templateData() map[string]any {
	data := make(map[string]any, len(x.st.Context)+1)
	for k, v := range x.st.Context {
		data[k] = v
	}
	data["sys"] = x.st.Sys
	return data
}

// finish ends the flow: the final state is checkpointed (a resume from it
// ends at once) and the context published as the run's data artifact.
func (x *execution) finish(failure error) error {
	x.st.Ended = true
	if failure != nil {
		x.st.Failure = failure.Error()
	}
	if err := x.checkpoint(); err != nil {
		return errors.Join(failure, err)
	}
	x.publishContext()
	return failure
}

// ended answers a run resumed from the checkpoint of its end.
func (x *execution) ended() error {
	if x.st.Failure != "" {
		return errdefs.Internalf("%s", x.st.Failure)
	}
	return nil
}
