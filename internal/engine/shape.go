package engine

// Shape is an engine's structure drawn as nodes and edges — a workflow's
// steps and their dependencies, a flow's nodes and transitions — for the
// faces that show an agent as a graph (the Agent Protocol's assistant
// graph). "__start__" and "__end__" name the entry and the exit.
type Shape struct {
	Nodes []ShapeNode `json:"nodes"`
	Edges []ShapeEdge `json:"edges"`
}

// ShapeNode is one node: its id and what kind of node it is (engine-
// defined: "agent", "loop", "input", "action", …).
type ShapeNode struct {
	ID   string `json:"id"`
	Kind string `json:"kind,omitempty"`
}

// ShapeEdge leads from one node to another; Conditional says the edge is
// taken only when its condition holds.
type ShapeEdge struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Conditional bool   `json:"conditional,omitempty"`
}

// Shaper is the optional interface of an engine that can draw itself.
type Shaper interface {
	Shape() Shape
}

// ShapeOf returns the shape of the first Shaper found walking eng's
// wrappers outwards-in; ok is false when none draws itself.
func ShapeOf(eng Engine) (s Shape, ok bool) {
	if sh, found := eng.(Shaper); found {
		return sh.Shape(), true
	}
	return Shape{}, false
}
