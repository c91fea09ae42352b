package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentd/internal/strictjson"
)

// stepIDPattern is the parser's strict step id rule (spec §4); the schema
// only holds the loose one.
var (
	stepIDPattern  = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)
	looseIDPattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]*$`)
)

// check applies the validator-enforced rules of spec §11 and compiles
// every expression and result schema.
func (w *Workflow) check(ps *problems) {
	if w.Version > 1 {
		ps.add("version", CodeUnknownVersion, "unknown version %d (this is spec v1: omit version or set 1)", w.Version)
	}
	for _, name := range slices.Sorted(maps.Keys(w.Agents)) {
		a := w.Agents[name]
		if a == nil {
			continue // the schema reports a null agent
		}
		if len(a.ResultSchema) > 0 {
			sch, err := compileResultSchema(name, a.ResultSchema)
			if err != nil {
				ps.add("agents."+name+".resultSchema", CodeResultSchema, "%v", err)
			}
			a.schema = sch
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.Includes)) {
		if strings.TrimSpace(w.Includes[name]) == "" {
			ps.add("includes."+name, CodeInclude, "empty path")
		}
	}
	w.checkScope("", w.Steps, false, ps)
}

// checkScope checks the steps of one DAG: the top level, or a loop's
// inner steps (inLoop).
func (w *Workflow) checkScope(path string, steps []*Step, inLoop bool, ps *problems) {
	ids := make(map[string]int, len(steps))
	var names []string
	for i, s := range steps {
		p := index(path, "steps", i)
		if s == nil {
			continue // the schema reports it
		}
		if looseIDPattern.MatchString(s.ID) && !stepIDPattern.MatchString(s.ID) {
			ps.add(p+".id", CodeInvalidStepID, "%q: step ids are 1-64 lowercase letters, digits, '_' or '-', starting with a letter", s.ID)
		}
		if j, dup := ids[s.ID]; dup {
			ps.add(p+".id", CodeDuplicateStep, "%q is already the id of %s", s.ID, index(path, "steps", j))
			continue
		}
		ids[s.ID] = i
		names = append(names, s.ID)
	}
	for i, s := range steps {
		if s != nil {
			w.checkStep(index(path, "steps", i), s, names, inLoop, ps)
		}
	}
	for _, cycle := range findCycles(steps, ids) {
		ps.add(join(path, "steps"), CodeCycle, "dependency cycle %s", strings.Join(cycle, " → "))
	}
}

func (w *Workflow) checkStep(p string, s *Step, scopeIDs []string, inLoop bool, ps *problems) {
	if s.Agent != "" && w.Agents[s.Agent] == nil {
		ps.add(p+".agent", CodeMissingAgent, "unknown agent %q%s", s.Agent, suggest(s.Agent, slices.Sorted(maps.Keys(w.Agents)), "agents"))
	}
	for j, dep := range s.DependsOn {
		switch {
		case dep == s.ID:
			ps.add(index(p, "dependsOn", j), CodeCycle, "step %q depends on itself", s.ID)
		case !slices.Contains(scopeIDs, dep):
			ps.add(index(p, "dependsOn", j), CodeMissingDep, "unknown step %q%s", dep, suggest(dep, scopeIDs, "steps"))
		}
	}
	if s.Include != "" {
		w.checkInclude(p, s, ps)
	}
	if s.Condition != nil && *s.Condition != "" {
		e, err := compileExpr(*s.Condition, scopeIDs, wantBool)
		if err != nil {
			ps.add(p+".condition", CodeCEL, "%v", err)
		}
		s.cond = e
	}
	if s.Loop != nil {
		w.checkLoop(p, s, scopeIDs, inLoop, ps)
	}
}

// checkInclude: an include step delegates entirely to its sub-workflow.
func (w *Workflow) checkInclude(p string, s *Step, ps *problems) {
	for _, f := range []struct {
		set  bool
		name string
	}{
		{s.Agent != "", "agent"}, {s.Instructions != "", "instructions"}, {s.Loop != nil, "loop"},
		{s.Condition != nil, "condition"}, {len(s.ContextFiles) > 0, "contextFiles"}, {s.Model != "", "model"},
	} {
		if f.set {
			ps.add(p+"."+f.name, "include_has_"+strings.ToLower(f.name), "an include step must not have %s: the sub-workflow defines it", f.name)
		}
	}
	if _, named := w.Includes[s.Include]; !named && !workflowPath(s.Include) {
		ps.add(p+".include", CodeInclude, "%q is neither a name in includes%s nor a workflow file path (.yaml, .yml or .json)",
			s.Include, suggest(s.Include, slices.Sorted(maps.Keys(w.Includes)), "includes"))
	}
}

func workflowPath(ref string) bool {
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(ref, ext) && len(ref) > len(ext) {
			return true
		}
	}
	return false
}

func (w *Workflow) checkLoop(p string, s *Step, scopeIDs []string, inLoop bool, ps *problems) {
	l, lp := s.Loop, p+".loop"
	if inLoop {
		ps.add(lp, CodeNestedLoop, "a step inside loop.steps must not loop itself (nested loops are not part of spec v1)")
	}
	var innerIDs []string
	for _, in := range l.Steps {
		if in != nil {
			innerIDs = append(innerIDs, in.ID)
		}
	}
	if f := l.ForEach; f != nil {
		for _, c := range []struct {
			set        bool
			field, tag string
		}{
			{l.MaxIterations != nil, "maxIterations", "foreach_with_max_iterations"},
			{l.Until != nil, "until", "foreach_with_until"},
			{l.UntilAgent != "", "untilAgent", "foreach_with_untilagent"},
			{l.Delay != nil, "delay", "foreach_with_delay"},
		} {
			if c.set {
				ps.add(lp+"."+c.field, c.tag, "forEach iterates over its items: %s belongs to repeat-until loops", c.field)
			}
		}
		switch {
		case f.static && len(f.Items) == 0:
			ps.add(lp+".forEach", CodeForEachEmpty, "an empty list: nothing to iterate over")
		case !f.static:
			e, err := compileExpr(f.Expr, scopeIDs, wantList)
			if err != nil {
				ps.add(lp+".forEach", CodeCEL, "%v", err)
			}
			l.each = e
		}
	} else if l.MaxIterations == nil {
		ps.add(lp+".maxIterations", CodeLoopNoMaxIterations, "a repeat-until loop needs maxIterations (at least 1) to be sure to end")
	}
	if l.Until != nil && *l.Until != "" {
		e, err := compileExpr(*l.Until, innerIDs, wantBool)
		if err != nil {
			ps.add(lp+".until", CodeCEL, "%v", err)
		}
		l.until = e
	}
	if l.UntilAgent != "" {
		w.checkJudge(lp+".untilAgent", l.UntilAgent, ps)
	}
	if l.Steps != nil {
		w.checkScope(lp, l.Steps, true, ps)
	}
}

// checkJudge: an untilAgent judge exists and its resultSchema requires a
// boolean done.
func (w *Workflow) checkJudge(p, name string, ps *problems) {
	a := w.Agents[name]
	if a == nil {
		ps.add(p, CodeUntilAgentBadRef, "unknown agent %q%s", name, suggest(name, slices.Sorted(maps.Keys(w.Agents)), "agents"))
		return
	}
	var sch struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(a.ResultSchema) > 0 {
		_ = json.Unmarshal(a.ResultSchema, &sch)
	}
	done, ok := sch.Properties["done"]
	switch {
	case len(a.ResultSchema) == 0:
		ps.add(p, CodeUntilAgentSchema, "judge agent %q has no resultSchema: it must declare a required boolean \"done\"", name)
	case !ok:
		ps.add(p, CodeUntilAgentSchema, "judge agent %q: resultSchema.properties has no \"done\"", name)
	case done.Type != "boolean":
		ps.add(p, CodeUntilAgentSchema, "judge agent %q: resultSchema.properties.done.type is %v, want \"boolean\"", name, done.Type)
	case !slices.Contains(sch.Required, "done"):
		ps.add(p, CodeUntilAgentSchema, "judge agent %q: resultSchema.required must list \"done\"", name)
	}
}

// compileResultSchema checks an agent's resultSchema against the JSON
// Schema meta-schema and compiles it for validating submit_result calls.
func compileResultSchema(agent string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(offline{})
	loc := "https://agentd.invalid/workflow/agents/" + agent + "/resultSchema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(loc)
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		var leaves Problems
		collectSchemaProblems(ve, &leaves)
		msgs := make([]string, len(leaves))
		for i, l := range leaves {
			msgs[i] = strings.TrimPrefix(l.Path+": ", ": ") + l.Message
		}
		return nil, fmt.Errorf("not a valid JSON Schema: %s", strings.Join(msgs, "; "))
	}
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %v", err)
	}
	return sch, nil
}

// findCycles returns each dependency cycle once, as the ids along it with
// the first repeated at the end (a → c → b → a).
func findCycles(steps []*Step, ids map[string]int) [][]string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make([]int, len(steps))
	var cycles [][]string
	var path []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = onPath
		path = append(path, i)
		for _, dep := range steps[i].DependsOn {
			j, ok := ids[dep]
			if !ok || j == i || steps[j] == nil {
				continue
			}
			switch state[j] {
			case unvisited:
				visit(j)
			case onPath:
				at := slices.Index(path, j)
				var names []string
				for _, k := range path[at:] {
					names = append(names, steps[k].ID)
				}
				cycles = append(cycles, append(names, steps[j].ID))
			}
		}
		path = path[:len(path)-1]
		state[i] = done
	}
	for i, s := range steps {
		if s != nil && state[i] == unvisited {
			if _, ok := ids[s.ID]; ok && ids[s.ID] == i {
				visit(i)
			}
		}
	}
	return cycles
}

// suggest returns ` (did you mean "x"?)` for the closest of known to got,
// or the list of known names when none is close.
func suggest(got string, known []string, what string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := strictjson.Distance(got, k); d < bestD {
			best, bestD = k, d
		}
	}
	switch {
	case best != "":
		return fmt.Sprintf(" (did you mean %q?)", best)
	case len(known) == 0:
		return fmt.Sprintf(" (no %s are defined)", what)
	case len(known) <= 10:
		return fmt.Sprintf(" (%s: %s)", what, strings.Join(known, ", "))
	}
	return ""
}
