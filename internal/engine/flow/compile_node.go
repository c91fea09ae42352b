package flow

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// nodeTypes are the values type may take; the behaviour decides anyway.
var nodeTypes = []string{"", "text", "question", "tool", "start"}

// reservedKeys cannot be written by save_to: the engine owns them.
var reservedKeys = []string{"sys", "tool_result", "tool_results", "input"}

// node compiles one node, recording its problems.
func (c *compiler) node(s *Node) *node {
	n := &node{id: s.ID, saveTo: s.SaveTo, required: s.RequiredContext, defaults: s.DefaultContext}
	n.behaviour = c.behaviour(s)
	if t, err := compileText(s.ID, s.Content); err != nil {
		c.errorf(s.ID, "content", "%v", err)
	} else {
		n.content = t
	}
	n.do = c.call(s.ID, "do", s.Do)
	n.undo = c.call(s.ID, "undo", s.Undo)
	if s.Undo != nil && s.Do == nil {
		c.errorf(s.ID, "undo", "an undo compensates a do: this node has no do")
	}
	if n.behaviour == BehaviourInput {
		c.input(s, n)
	} else if len(s.InputOptions) > 0 || s.InputDefault != "" {
		c.errorf(s.ID, "input_options", "input settings on a node that does not wait for input")
	}
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		switch {
		case err != nil || d <= 0:
			c.errorf(s.ID, "timeout", "%q is not a positive duration such as \"30s\"", s.Timeout)
		case n.behaviour != BehaviourInput:
			c.errorf(s.ID, "timeout", "only a node that waits for input can time out")
		default:
			n.timeout = d
		}
	}
	if s.SaveTo != "" && (slices.Contains(reservedKeys, s.SaveTo) || strings.HasPrefix(s.SaveTo, "sys.")) {
		c.errorf(s.ID, "save_to", "%q is reserved (%s)", s.SaveTo, strings.Join(reservedKeys, ", "))
	}
	if s.SaveTo != "" && n.behaviour == BehaviourText {
		c.errorf(s.ID, "save_to", "a text node has nothing to save: save_to needs an input or a do")
	}
	for i, k := range s.RequiredContext {
		if k == "" {
			c.errorf(s.ID, fmt.Sprintf("required_context[%d]", i), "empty key")
		}
	}
	c.schema(s, n)
	c.routes(s, n)
	if msg, ok := s.Metadata["confirm_msg"].(string); ok && msg != "" && n.do != nil {
		if t, err := compileText(s.ID+".confirm_msg", msg); err != nil {
			c.errorf(s.ID, "metadata.confirm_msg", "%v", err)
		} else {
			n.approval = t
		}
	}
	return n
}

// behaviour applies the duck typing of the node syntax and checks that
// type, when given, agrees with it.
func (c *compiler) behaviour(s *Node) string {
	waits := s.Wait || s.InputType != "" || len(s.Options) > 0
	if !slices.Contains(nodeTypes, s.Type) {
		c.errorf(s.ID, "type", "unknown type %q (want text, question or tool; or leave it out)", s.Type)
	}
	switch {
	case s.Do != nil && waits:
		c.errorf(s.ID, "do", "a node cannot both act (do) and wait for input (wait, input_type, options): split it in two")
		return BehaviourAction
	case s.Do != nil:
		if s.Type == "question" || s.Type == "text" {
			c.errorf(s.ID, "type", "type %q but the node has a do (an action)", s.Type)
		}
		return BehaviourAction
	case waits || s.Type == "question":
		if s.Type == "tool" {
			c.errorf(s.ID, "type", "type tool needs a do")
		}
		return BehaviourInput
	case s.Type == "tool":
		c.errorf(s.ID, "type", "type tool needs a do")
	}
	return BehaviourText
}

// call compiles a do or undo.
func (c *compiler) call(nodeID, key string, s *Call) *call {
	if s == nil {
		return nil
	}
	if s.Name == "" {
		c.errorf(nodeID, key+".name", "required: the tool to call")
		return nil
	}
	if c.knownTool != nil && !c.knownTool(s.Name) {
		c.errorf(nodeID, key+".name", "unknown tool %q", s.Name)
	}
	args, err := compileArgs(nodeID+"."+key, s.Args)
	if err != nil {
		c.errorf(nodeID, key+".args", "%v", err)
	}
	return &call{name: s.Name, args: args}
}

// input compiles the input settings of an input node.
func (c *compiler) input(s *Node, n *node) {
	kind := s.InputType
	if kind == "" {
		kind = InputText
		if len(s.Options) > 0 || len(s.InputOptions) > 0 {
			kind = InputChoice
		}
	}
	if !slices.Contains(inputTypes, kind) {
		c.errorf(s.ID, "input_type", "unknown input type %q (want %s)", kind, strings.Join(inputTypes, ", "))
	}
	opts := slices.Clone(s.InputOptions)
	for i, o := range s.Options {
		if o.Text == "" {
			c.errorf(s.ID, fmt.Sprintf("options[%d].text", i), "required")
			continue
		}
		if slices.Contains(opts, o.Text) {
			c.errorf(s.ID, fmt.Sprintf("options[%d]", i), "option %q given twice", o.Text)
			continue
		}
		opts = append(opts, o.Text)
		if o.To != "" {
			if n.answerTo == nil {
				n.answerTo = map[string]string{}
			}
			n.answerTo[o.Text] = o.To
		}
	}
	switch {
	case kind == InputChoice && len(opts) == 0:
		c.errorf(s.ID, "input_options", "a choice needs options")
	case kind != InputChoice && len(opts) > 0:
		c.errorf(s.ID, "options", "options make a choice, but input_type is %q", kind)
	}
	n.in = input{kind: kind, options: opts, def: s.InputDefault, hasDef: s.InputDefault != ""}
	if n.in.hasDef {
		if _, err := n.in.accept(s.InputDefault); err != nil {
			c.errorf(s.ID, "input_default", "%v", err)
		}
	}
	n.in.fallback = s.To != "" || s.Next != "" || slices.ContainsFunc(s.Transitions, func(t Transition) bool { return t.cond() == "" })
}

// schema compiles context_schema.
func (c *compiler) schema(s *Node, n *node) {
	for k, v := range s.ContextSchema {
		t, err := parseValueType(v)
		if err != nil {
			c.errorf(s.ID, "context_schema."+k, "%v", err)
			continue
		}
		if n.schema == nil {
			n.schema = map[string]valueType{}
		}
		n.schema[k] = t
		n.schemaKeys = append(n.schemaKeys, k)
	}
	slices.Sort(n.schemaKeys)
}

// routes compiles transitions, to, on_* and the signal handlers.
func (c *compiler) routes(s *Node, n *node) {
	if s.To != "" && s.Next != "" && s.To != s.Next {
		c.errorf(s.ID, "next", "both to %q and next %q: use one", s.To, s.Next)
	}
	n.to = s.To
	if n.to == "" {
		n.to = s.Next
	}
	for i, t := range s.Transitions {
		key := fmt.Sprintf("transitions[%d]", i)
		if t.Condition != "" && t.If != "" {
			c.errorf(s.ID, key, "both condition and if: use one")
		}
		if t.To == "" {
			c.errorf(s.ID, key+".to", "required")
		}
		r := route{to: t.To}
		if src := t.cond(); src != "" {
			cond, err := compileCondition(c.env, src)
			if err != nil {
				c.errorf(s.ID, key+".condition", "%v", err)
			}
			r.cond = cond
		}
		n.transitions = append(n.transitions, r)
	}
	n.onError, n.onDenied = s.OnError, s.OnDenied
	if s.OnError != "" && n.behaviour != BehaviourAction {
		c.errorf(s.ID, "on_error", "only an action (do) can fail")
	}
	if s.OnDenied != "" && n.behaviour == BehaviourText {
		c.errorf(s.ID, "on_denied", "only a confirm input or an action can be denied")
	}
	if s.OnDenied != "" && n.behaviour == BehaviourInput && n.in.kind != InputConfirm {
		c.errorf(s.ID, "on_denied", "only a confirm input can be denied, this one is %q", n.in.kind)
	}
	n.signals = map[string]string{}
	for sig, to := range s.OnSignal {
		n.signals[sig] = to
	}
	for _, sugar := range []struct{ key, sig, to string }{
		{"on_timeout", SignalTimeout, s.OnTimeout}, {"on_interrupt", SignalInterrupt, s.OnInterrupt},
	} {
		if sugar.to == "" {
			continue
		}
		if prev, ok := n.signals[sugar.sig]; ok && prev != sugar.to {
			c.errorf(s.ID, sugar.key, "%s goes to %q but on_signal.%s to %q", sugar.key, sugar.to, sugar.sig, prev)
		}
		n.signals[sugar.sig] = sugar.to
	}
	if _, ok := n.signals[SignalTimeout]; ok && n.timeout == 0 && s.Timeout == "" {
		c.warnf(s.ID, "on_timeout", "a timeout handler on a node without a timeout never fires")
	}
	if len(s.OnSignalDefault) > 0 && s.ID != EntryNode {
		c.warnf(s.ID, "on_signal_default", "only the entry node's on_signal_default applies")
	}
}
