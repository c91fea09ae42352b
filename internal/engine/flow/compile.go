package flow

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"cel.dev/cel-go/cel"
)

// The behaviours a node can have.
const (
	BehaviourText   = "text"
	BehaviourInput  = "input"
	BehaviourAction = "action"
)

// The signals the engine raises. interrupt is a cancel, shutdown a drain,
// timeout an input that waited longer than its node's timeout.
const (
	SignalInterrupt = "interrupt"
	SignalShutdown  = "shutdown"
	SignalTimeout   = "timeout"
)

// Flow is a compiled flow: every template parsed, every condition planned,
// every route resolved to a node. It is immutable and safe to share.
type Flow struct {
	name        string
	description string
	context     map[string]any
	nodes       map[string]*node
	// ids lists the node ids in declaration order.
	ids []string
	// signalDefaults is the entry node's on_signal_default.
	signalDefaults map[string]string
}

// Name returns the flow's name.
func (f *Flow) Name() string { return f.name }

// Nodes returns the node ids, in declaration order.
func (f *Flow) Nodes() []string { return slices.Clone(f.ids) }

// Tools returns the names of the tools the flow calls (do and undo),
// sorted, without repeats.
func (f *Flow) Tools() []string {
	var names []string
	for _, n := range f.nodes {
		for _, c := range []*call{n.do, n.undo} {
			if c != nil && !slices.Contains(names, c.name) {
				names = append(names, c.name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// node is one compiled node.
type node struct {
	id        string
	behaviour string
	content   *text
	do, undo  *call
	in        input
	// answerTo routes a choice answer to a node (options with "to").
	answerTo    map[string]string
	timeout     time.Duration
	saveTo      string
	required    []string
	defaults    map[string]any
	schemaKeys  []string // sorted keys of schema
	schema      map[string]valueType
	transitions []route
	to          string
	onError     string
	onDenied    string
	signals     map[string]string
	// approval asks the user to confirm the action first (metadata
	// confirm_msg); its text is the question.
	approval *text
}

// call is a compiled do or undo.
type call struct {
	name string
	args any // compiled by compileArgs
}

// route is one compiled transition.
type route struct {
	cond *condition // nil: always
	to   string
}

// Compile checks spec and compiles it. The problems are every mistake
// found (errors) and every doubtful construct (warnings); the flow is nil
// when any problem is an error. knownTool, when not nil, reports whether a
// tool name can be called; do and undo naming anything else are errors.
func Compile(spec *Spec, knownTool func(string) bool) (*Flow, Problems) {
	c := compiler{knownTool: knownTool}
	f := c.compile(spec)
	if c.problems.HasErrors() {
		return nil, c.problems
	}
	return f, c.problems
}

type compiler struct {
	knownTool func(string) bool
	env       *cel.Env
	problems  Problems
}

func (c *compiler) errorf(nodeID, key, format string, args ...any) {
	c.problems = append(c.problems, Problem{Node: nodeID, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (c *compiler) warnf(nodeID, key, format string, args ...any) {
	c.problems = append(c.problems, Problem{Node: nodeID, Key: key, Msg: fmt.Sprintf(format, args...), Warning: true})
}

func (c *compiler) compile(spec *Spec) *Flow {
	env, err := newCELEnv()
	if err != nil {
		c.errorf("", "", "CEL environment: %v", err)
		return nil
	}
	c.env = env
	f := &Flow{name: spec.Name, description: spec.Description, context: maps.Clone(spec.Context), nodes: map[string]*node{}}
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if _, dup := f.nodes[n.ID]; dup {
			c.errorf(n.ID, "id", "node %q is defined twice", n.ID)
			continue
		}
		if n.ID == Rollback {
			c.errorf(n.ID, "id", "%q is the reserved rollback target and cannot name a node", Rollback)
		}
		f.nodes[n.ID] = c.node(n)
		f.ids = append(f.ids, n.ID)
	}
	entry, ok := f.nodes[EntryNode]
	if !ok {
		c.errorf("", "nodes", "no entry node %q (nodes: %q)", EntryNode, f.ids)
		return f
	}
	f.signalDefaults = entry.signalDefaultsFrom(spec)
	c.checkGraph(f)
	return f
}

// signalDefaultsFrom finds the entry node's on_signal_default in spec.
func (n *node) signalDefaultsFrom(spec *Spec) map[string]string {
	for _, s := range spec.Nodes {
		if s.ID == n.id {
			return maps.Clone(s.OnSignalDefault)
		}
	}
	return nil
}
