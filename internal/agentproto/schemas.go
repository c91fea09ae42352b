package agentproto

import (
	"encoding/json"
	"net/http"

	"agentd/internal/engine"
	"agentd/internal/runtime"
)

// messagesSchema is the JSON Schema of the state every agent reads and
// writes: a list of LangChain messages.
var messagesSchema = map[string]any{
	"type":  "array",
	"title": "Messages",
	"items": map[string]any{
		"type":     "object",
		"required": []string{"type", "content"},
		"properties": map[string]any{
			"type":    map[string]any{"enum": []string{"human", "ai", "tool", "system"}},
			"content": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "array"}}},
			"id":      map[string]any{"type": "string"},
		},
	},
}

func (s *Server) assistantSchemas(w http.ResponseWriter, r *http.Request) {
	a, ok := s.pathAgent(w, r)
	if !ok {
		return
	}
	state := map[string]any{
		"title": a.ID, "type": "object",
		"properties": map[string]any{
			"messages": messagesSchema,
			"steps":    map[string]any{"type": "object", "description": "a workflow's step results, by step id"},
			"context":  map[string]any{"type": "object", "description": "a flow's saved answers"},
		},
	}
	input := map[string]any{
		"title": a.ID + "_input", "type": "object", "required": []string{"messages"},
		"properties": map[string]any{"messages": messagesSchema},
	}
	if len(a.Card.Skills) > 0 {
		var examples []string
		for _, sk := range a.Card.Skills {
			examples = append(examples, sk.Examples...)
		}
		input["examples"] = examples
	}
	config := map[string]any{
		"title": a.ID + "_config", "type": "object",
		"properties": map[string]any{"tools": map[string]any{"type": "array", "readOnly": true, "default": a.Tools}},
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"graph_id": a.ID, "input_schema": input, "output_schema": state, "state_schema": state,
		"config_schema": config, "context_schema": contextSchema(a),
	})
}

// assistantGraph draws the agent: a workflow's DAG and a flow's nodes as
// their engines draw them (engine.Shaper), a tool loop's model/tool cycle,
// else the agent as one node.
func (s *Server) assistantGraph(w http.ResponseWriter, r *http.Request) {
	a, ok := s.pathAgent(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, graphOf(a))
}

func graphOf(a *runtime.Agent) map[string]any {
	shape, ok := engine.ShapeOf(a.Engine)
	if !ok {
		shape = loopShape(a)
	}
	nodes := make([]any, 0, len(shape.Nodes))
	for _, n := range shape.Nodes {
		data := map[string]any{"id": []string{"agentd", a.ID, n.ID}, "name": n.ID}
		if n.Kind != "" {
			data["kind"] = n.Kind
		}
		nodes = append(nodes, map[string]any{"id": n.ID, "type": "runnable", "data": data})
	}
	edges := make([]any, 0, len(shape.Edges))
	for _, e := range shape.Edges {
		edges = append(edges, map[string]any{"source": e.From, "target": e.To, "conditional": e.Conditional})
	}
	return map[string]any{"nodes": nodes, "edges": edges}
}

// loopShape is an agent without a shape of its own: a tool loop's model
// and tools in a cycle, or the agent alone.
func loopShape(a *runtime.Agent) engine.Shape {
	s := engine.Shape{Nodes: []engine.ShapeNode{{ID: "__start__"}, {ID: a.ID, Kind: "model"}, {ID: "__end__"}}}
	s.Edges = []engine.ShapeEdge{{From: "__start__", To: a.ID}, {From: a.ID, To: "__end__", Conditional: len(a.Tools) > 0}}
	if len(a.Tools) > 0 {
		s.Nodes = append(s.Nodes, engine.ShapeNode{ID: "tools", Kind: "tools"})
		s.Edges = append(s.Edges, engine.ShapeEdge{From: a.ID, To: "tools", Conditional: true}, engine.ShapeEdge{From: "tools", To: a.ID})
	}
	return s
}

// assistantSubgraphs answers that an agent has no separately addressable
// subgraphs: a workflow's steps stream as namespaces of its runs.
func (s *Server) assistantSubgraphs(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.pathAgent(w, r); ok {
		writeJSON(w, http.StatusOK, map[string]any{})
	}
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var u, v any
	_ = json.Unmarshal(x, &u)
	_ = json.Unmarshal(y, &v)
	x, _ = json.Marshal(u)
	y, _ = json.Marshal(v)
	return string(x) == string(y)
}

// contextSchema is the JSON Schema of what an assistant of a may set in
// its context: a loop agent's overrides (config.AssistantOverrides, under
// the names of the configuration file), nothing for other engines.
func contextSchema(a *runtime.Agent) map[string]any {
	out := map[string]any{"type": "object", "title": a.ID + "_context", "additionalProperties": false, "properties": map[string]any{}}
	if a.Configure == nil {
		return out
	}
	out["properties"] = map[string]any{
		"model":           map[string]any{"type": "string"},
		"system_prompt":   map[string]any{"type": "string"},
		"temperature":     map[string]any{"type": "number", "minimum": 0, "maximum": 2},
		"top_p":           map[string]any{"type": "number", "exclusiveMinimum": 0, "maximum": 1},
		"max_tokens":      map[string]any{"type": "integer", "minimum": 0},
		"tools":           map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "default": a.Tools},
		"response_schema": map[string]any{"type": "object"},
	}
	return out
}
