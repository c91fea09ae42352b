package flow

import (
	"sort"

	"agentd/internal/engine"
)

var _ engine.Shaper = (*Engine)(nil)

// Shape draws the flow: its nodes in declaration order (EntryNode is the
// entry), each transition an edge (conditional when it has a condition),
// a node without transitions leading to the exit, and the error, denial
// and signal routes as conditional edges.
func (e *Engine) Shape() engine.Shape {
	f := e.cfg.Flow
	s := engine.Shape{Nodes: []engine.ShapeNode{{ID: "__start__"}}}
	s.Edges = append(s.Edges, engine.ShapeEdge{From: "__start__", To: EntryNode})
	for _, id := range f.ids {
		n := f.nodes[id]
		s.Nodes = append(s.Nodes, engine.ShapeNode{ID: id, Kind: n.behaviour})
		out := 0
		edge := func(to string, cond bool) {
			if to != "" {
				s.Edges = append(s.Edges, engine.ShapeEdge{From: id, To: to, Conditional: cond})
				out++
			}
		}
		for _, r := range n.transitions {
			edge(r.to, r.cond != nil)
		}
		edge(n.to, false)
		answers := make([]string, 0, len(n.answerTo))
		for a := range n.answerTo {
			answers = append(answers, a)
		}
		sort.Strings(answers)
		for _, a := range answers {
			edge(n.answerTo[a], true)
		}
		edge(n.onError, true)
		edge(n.onDenied, true)
		if out == 0 {
			s.Edges = append(s.Edges, engine.ShapeEdge{From: id, To: "__end__"})
		}
	}
	s.Nodes = append(s.Nodes, engine.ShapeNode{ID: "__end__"})
	return s
}
