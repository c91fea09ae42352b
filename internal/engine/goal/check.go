package goal

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"agentd/internal/engine/graph"
)

// CodePlanAgent is the problem code of a plan that uses an agent, or a
// model, the goal agent does not offer it.
const CodePlanAgent = "plan_agent"

// check validates a plan (YAML or JSON) exactly as a workflow file is
// validated, after completing its agents: an agent the goal agent offers
// that the plan names but does not declare is declared for it
// ({description, model: "agent:<id>"}). Beyond the file's rules a plan
// may use only the offered agents, every step names one, and the engines
// of its agents must resolve. It returns the completed document as JSON,
// or graph.Problems.
func (e *Engine) check(doc []byte) (json.RawMessage, error) {
	j, err := yaml.YAMLToJSON(doc)
	var m map[string]any
	if err == nil && json.Unmarshal(j, &m) == nil && m != nil {
		e.complete(m)
		if j, err = json.Marshal(m); err != nil {
			return nil, graph.Problems{{Code: graph.CodeValidation, Message: err.Error()}}
		}
	} else {
		j = doc // graph says what is wrong with it
	}
	wf, err := parsePlan(j)
	if err != nil {
		return nil, err
	}
	if ps := e.checkAgents(wf); len(ps) > 0 {
		return nil, ps
	}
	if _, err := graph.New(graph.Config{Workflow: wf, Agents: e.cfg.Steps}); err != nil {
		return nil, graph.Problems{{Code: CodePlanAgent, Message: err.Error()}}
	}
	return canonical(wf, j), nil
}

// canonical is the plan as the workflow's own encoding writes it — keys
// in the spec's order (name, agents, steps; id, agent, instructions …),
// which people read more easily than sorted ones — when that encoding
// parses back; else doc as it is.
func canonical(wf *graph.Workflow, doc json.RawMessage) json.RawMessage {
	c, err := json.Marshal(wf)
	if err != nil {
		return doc
	}
	if _, err := parsePlan(c); err != nil {
		return doc
	}
	return c
}

// parsePlan parses a plan as an inline workflow: it may reference no file.
func parsePlan(doc json.RawMessage) (*graph.Workflow, error) {
	return graph.ParseIn(doc, "")
}

// complete declares the offered agents the plan's steps name.
func (e *Engine) complete(m map[string]any) {
	agents, _ := m["agents"].(map[string]any)
	if agents == nil {
		agents = map[string]any{}
	}
	named := map[string]bool{}
	referenced(m["steps"], named)
	for id := range named {
		a, ok := e.allowed(id)
		if !ok {
			continue
		}
		decl, _ := agents[id].(map[string]any)
		if decl == nil {
			if _, declared := agents[id]; declared {
				continue // not a mapping: graph reports it
			}
			decl = map[string]any{}
		}
		if _, ok := decl["description"]; !ok {
			decl["description"] = nonEmpty(a.Description, "Agent "+a.ID)
		}
		if _, ok := decl["model"]; !ok {
			decl["model"] = "agent:" + a.ID
		}
		agents[id] = decl
	}
	if len(agents) > 0 {
		m["agents"] = agents
	}
}

// referenced collects the agent names steps use (agent, untilAgent),
// inner loop steps included.
func referenced(v any, out map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok && (k == "agent" || k == "untilAgent") {
				out[s] = true
				continue
			}
			referenced(x, out)
		}
	case []any:
		for _, x := range t {
			referenced(x, out)
		}
	}
}

// checkAgents finds what a plan may not do that a workflow file may: use
// an agent or a model the goal agent does not offer, or a step without an
// agent (it would run on the server's default agent).
func (e *Engine) checkAgents(wf *graph.Workflow) graph.Problems {
	var ps graph.Problems
	offered := quoted(e.agentIDs())
	add := func(path, format string, args ...any) {
		ps = append(ps, graph.Problem{Path: path, Code: CodePlanAgent, Message: fmt.Sprintf(format, args...)})
	}
	for _, name := range sortedKeys(wf.Agents) {
		id, ok := strings.CutPrefix(wf.Agents[name].Model, "agent:")
		if _, offeredID := e.allowed(id); !ok || !offeredID {
			add("agents."+name, "%q is not an agent this plan may use (agents: %s)", name, offered)
		}
	}
	var walk func(path string, steps []*graph.Step)
	walk = func(path string, steps []*graph.Step) {
		for i, s := range steps {
			p := fmt.Sprintf("%ssteps[%d]", path, i)
			if s.Loop != nil && len(s.Loop.Steps) > 0 {
				walk(p+".loop.", s.Loop.Steps)
				continue
			}
			if s.Agent == "" {
				add(p+".agent", "required in a plan: name one of %s", offered)
			}
			if id, ok := strings.CutPrefix(s.Model, "agent:"); s.Model != "" && !ok {
				add(p+".model", "%q: a plan's step may only name another agent (agent:<id>, of %s)", s.Model, offered)
			} else if _, offeredID := e.allowed(id); ok && !offeredID {
				add(p+".model", "%q is not an agent this plan may use (agents: %s)", s.Model, offered)
			}
		}
	}
	walk("", wf.Steps)
	return ps
}

// yamlOf renders a plan's JSON as YAML for people, its keys in the
// document's order.
func yamlOf(doc json.RawMessage) string {
	var n yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &n); err != nil {
		return string(doc)
	}
	block(&n)
	var b strings.Builder
	enc := yamlv3.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return string(doc)
	}
	return b.String()
}

// block drops the JSON's flow style and quotes: the encoder quotes what
// needs it to stay a string.
func block(n *yamlv3.Node) {
	n.Style = 0
	for _, c := range n.Content {
		block(c)
	}
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
