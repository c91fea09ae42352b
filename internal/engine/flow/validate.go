package flow

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"agentd/internal/errdefs"
)

// Problem is one finding of Compile: an error, which stops the flow from
// running, or a warning about something that runs but is probably wrong.
type Problem struct {
	Node    string // "" for the flow as a whole
	Key     string // the node key at fault ("transitions[1].condition")
	Msg     string
	Warning bool
}

// String reads `node "pay": do.name: unknown tool "x"`.
func (p Problem) String() string {
	var b strings.Builder
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Node != "" {
		fmt.Fprintf(&b, "node %q: ", p.Node)
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems are the findings of one Compile, in the order found.
type Problems []Problem

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return !p.Warning })
}

// Err is a Validation error listing the errors (warnings left out), or
// nil when there are none. name labels the flow.
func (ps Problems) Err(name string) error {
	var msgs []string
	for _, p := range ps {
		if !p.Warning {
			msgs = append(msgs, p.String())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errdefs.Validation(fmt.Errorf("flow %s: %w", name, errors.New(strings.Join(msgs, "; "))))
}

// checkGraph checks the routes between nodes: every target exists, every
// node is reachable from the entry, every node can reach an end, and a
// node that is not an end always has a way out.
func (c *compiler) checkGraph(f *Flow) {
	exists := func(to string) bool { _, ok := f.nodes[to]; return ok }
	for _, id := range f.ids {
		n := f.nodes[id]
		for _, e := range n.edges(true) {
			if e.to == Rollback && e.rollbackOK {
				continue
			}
			if !exists(e.to) {
				c.errorf(id, e.key, "unknown target %q", e.to)
			}
		}
		c.checkWayOut(n)
	}
	for sig, to := range f.signalDefaults {
		if !exists(to) {
			c.errorf(EntryNode, "on_signal_default."+sig, "unknown target %q", to)
		}
	}
	reach := f.reachable(EntryNode, true)
	for _, id := range f.ids {
		if !reach[id] {
			c.warnf(id, "", "unreachable from %q", EntryNode)
		}
	}
	ends := f.ending()
	for _, id := range f.ids {
		if reach[id] && !ends[id] {
			c.errorf(id, "", "no path from here reaches an end: the flow would never finish")
		}
	}
}

// checkWayOut flags a text or action node whose only routes are
// conditional: when no condition holds the run has nowhere to go and
// fails. Input nodes ask again instead.
func (c *compiler) checkWayOut(n *node) {
	if n.behaviour == BehaviourInput || len(n.transitions) == 0 || n.to != "" {
		return
	}
	if slices.ContainsFunc(n.transitions, func(r route) bool { return r.cond == nil }) {
		return
	}
	c.warnf(n.id, "transitions", "no fallback (a transition without condition, or to): when no condition holds the run fails")
}

// edge is one route out of a node.
type edge struct {
	key        string
	to         string
	rollbackOK bool // "rollback" is a valid target here
	signal     bool
}

// edges lists the node's routes; with signals, its signal handlers too.
func (n *node) edges(signals bool) []edge {
	var out []edge
	add := func(key, to string, rb bool) {
		if to != "" {
			out = append(out, edge{key: key, to: to, rollbackOK: rb})
		}
	}
	for _, o := range slices.Sorted(maps.Keys(n.answerTo)) {
		add("options", n.answerTo[o], false)
	}
	for i, t := range n.transitions {
		add(fmt.Sprintf("transitions[%d].to", i), t.to, true)
	}
	add("to", n.to, true)
	add("on_error", n.onError, true)
	add("on_denied", n.onDenied, true)
	if signals {
		for _, sig := range slices.Sorted(maps.Keys(n.signals)) {
			out = append(out, edge{key: "on_signal." + sig, to: n.signals[sig], signal: true})
		}
	}
	return out
}

// isEnd reports whether the flow may end at n: it has no ordinary route
// out (conditional transitions of an input node ask again, so they do not
// make an end), or it routes to rollback.
func (n *node) isEnd() bool {
	for _, e := range n.edges(false) {
		if e.to == Rollback {
			return true
		}
	}
	return n.to == "" && len(n.transitions) == 0 && len(n.answerTo) == 0
}

// reachable returns the nodes reachable from id, following signal
// handlers (and the entry's defaults) when signals is set.
func (f *Flow) reachable(id string, signals bool) map[string]bool {
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n, ok := f.nodes[cur]
		if !ok || seen[cur] {
			continue
		}
		seen[cur] = true
		for _, e := range n.edges(signals) {
			stack = append(stack, e.to)
		}
		if signals {
			for _, to := range f.signalDefaults {
				stack = append(stack, to)
			}
		}
	}
	return seen
}

// ending returns the nodes from which an end can be reached along
// ordinary routes.
func (f *Flow) ending() map[string]bool {
	ok := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, id := range f.ids {
			if ok[id] {
				continue
			}
			n := f.nodes[id]
			if n.isEnd() || slices.ContainsFunc(n.edges(false), func(e edge) bool { return ok[e.to] }) {
				ok[id] = true
				changed = true
			}
		}
	}
	return ok
}
