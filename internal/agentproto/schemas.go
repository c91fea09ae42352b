package agentproto

import (
	"encoding/json"
	"net/http"

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
		"config_schema": config, "context_schema": map[string]any{"type": "object", "title": a.ID + "_context"},
	})
}

// assistantGraph draws the agent: a tool loop's model/tool cycle, or one
// node for the agent's engine otherwise (a workflow's steps appear in its
// runs' plan events and step namespaces).
func (s *Server) assistantGraph(w http.ResponseWriter, r *http.Request) {
	a, ok := s.pathAgent(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, graphOf(a))
}

func graphOf(a *runtime.Agent) map[string]any {
	node := func(id string) map[string]any {
		return map[string]any{"id": id, "type": "runnable", "data": map[string]any{"id": []string{"agentd", id}, "name": id}}
	}
	edge := func(from, to string, conditional bool) map[string]any {
		return map[string]any{"source": from, "target": to, "conditional": conditional}
	}
	nodes := []any{node("__start__"), node(a.ID), node("__end__")}
	edges := []any{edge("__start__", a.ID, false), edge(a.ID, "__end__", len(a.Tools) > 0)}
	if len(a.Tools) > 0 {
		nodes = append(nodes, node("tools"))
		edges = append(edges, edge(a.ID, "tools", true), edge("tools", a.ID, false))
	}
	return map[string]any{"nodes": nodes, "edges": edges}
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
