package flow

import (
	"fmt"
	"strings"

	"agentd/internal/errdefs"
)

// startRollback starts unwinding the flow at node n: failed is the action
// failure that triggered it, nil for an explicit "to: rollback".
func (x *execution) startRollback(n *node, failed *actionError) error {
	rb := &rollback{From: n.id}
	if failed != nil {
		rb.Reason = failed.Error()
		rb.ReasonClass = string(errdefs.ClassOf(failed.err))
		rb.ReasonPublic = errdefs.IsPublic(failed.err)
	}
	x.st.Rollback = rb
	x.st.Pending = nil
	if err := x.checkpoint(); err != nil {
		return err
	}
	return x.unwind()
}

// unwind runs the undo of every completed action, newest first — the
// SAGA compensation. Each compensation is a tool call keyed by its
// action's key plus ":undo" and is checkpointed once done, so a resumed
// rollback neither skips nor repeats one. A failing compensation is
// reported (a step.error of kind undo) and recorded, and the unwinding
// goes on: every other action is still compensated. Then the flow ends:
// failed with the action's error and every compensation failure, or —
// after an explicit rollback whose compensations all succeeded —
// completed, with sys.rolled_back set.
func (x *execution) unwind() error {
	rb := x.st.Rollback
	for len(x.st.Done) > 0 {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		d := x.st.Done[len(x.st.Done)-1]
		if err := x.compensate(d); err != nil {
			rb.Failures = append(rb.Failures, err.Error())
		}
		x.st.Done = x.st.Done[:len(x.st.Done)-1]
		x.st.Pending = nil
		if err := x.checkpoint(); err != nil {
			return err
		}
	}
	x.st.Sys["rolled_back"] = true
	return x.finish(x.rollbackErr())
}

// compensate runs the undo of completed action d.
func (x *execution) compensate(d done) error {
	n, ok := x.f.nodes[d.Node]
	if !ok || n.undo == nil {
		return fmt.Errorf("node %q: undo: the flow no longer defines it", d.Node)
	}
	args, err := renderArgs(n.undo.args, x.templateData())
	if err != nil {
		return fmt.Errorf("node %q: undo.args.%v", d.Node, err)
	}
	key := IdempotencyKey(x.run.ID, d.Node, d.Visit) + ":undo"
	replay := x.st.Pending != nil && x.st.Pending.Key == key
	x.st.Pending = &pending{Tool: n.undo.name, Key: key, Undo: true}
	if err := x.checkpoint(); err != nil {
		return err
	}
	res, _, _ := x.call(d.Node, StepKindUndo, n.undo.name, args, key, replay)
	if res.IsError {
		return fmt.Errorf("node %q: undo %s failed: %v", d.Node, n.undo.name, resultErr(n.undo.name, res))
	}
	return nil
}

// rollbackErr is how a finished rollback ends the run.
func (x *execution) rollbackErr() error {
	rb := x.st.Rollback
	var parts []string
	if rb.Reason != "" {
		parts = append(parts, rb.Reason)
	}
	if len(rb.Failures) > 0 {
		parts = append(parts, "compensation failed: "+strings.Join(rb.Failures, "; "))
	}
	if len(parts) == 0 {
		return nil
	}
	err := fmt.Errorf("flow %s: %s (rolled back from node %q)", x.f.name, strings.Join(parts, "; "), rb.From)
	err = errdefs.New(failureClass(errdefs.Class(rb.ReasonClass), len(rb.Failures) > 0), err)
	if rb.ReasonPublic && len(rb.Failures) == 0 {
		// The action's own message was fit for clients (a demo tool's
		// bounce), and nothing else was added to it: keep it visible.
		err = errdefs.Public(err)
	}
	return err
}

// failureClass keeps the failed action's class for the run, except the
// ones that would misdescribe it: a tool's bad arguments are the flow's
// bug, not the caller's request (Validation would reject the run), and a
// failed compensation is an internal failure whatever started it.
func failureClass(c errdefs.Class, compensationFailed bool) errdefs.Class {
	switch {
	case compensationFailed, c == "", c == errdefs.ClassValidation, c == errdefs.ClassNotFound,
		c == errdefs.ClassAborted, c == errdefs.ClassInterrupted:
		return errdefs.ClassInternal
	}
	return c
}
