package graph

import "agentd/internal/engine"

var _ engine.Shaper = (*Engine)(nil)

// Shape draws the workflow's top-level steps as its DAG: each step after
// the steps it depends on, the entry before the steps that depend on none,
// the exit after the steps none depends on. A step with a condition is
// reached conditionally.
func (e *Engine) Shape() engine.Shape {
	s := engine.Shape{Nodes: []engine.ShapeNode{{ID: "__start__"}}}
	needed := map[string]bool{}
	for _, st := range e.wf.Steps {
		for _, d := range st.DependsOn {
			needed[d] = true
		}
	}
	for _, st := range e.wf.Steps {
		s.Nodes = append(s.Nodes, engine.ShapeNode{ID: st.ID, Kind: stepKind(st)})
		cond := st.Condition != nil && *st.Condition != ""
		if len(st.DependsOn) == 0 {
			s.Edges = append(s.Edges, engine.ShapeEdge{From: "__start__", To: st.ID, Conditional: cond})
		}
		for _, d := range st.DependsOn {
			s.Edges = append(s.Edges, engine.ShapeEdge{From: d, To: st.ID, Conditional: cond})
		}
		if !needed[st.ID] {
			s.Edges = append(s.Edges, engine.ShapeEdge{From: st.ID, To: "__end__"})
		}
	}
	s.Nodes = append(s.Nodes, engine.ShapeNode{ID: "__end__"})
	return s
}
