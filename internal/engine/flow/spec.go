package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EntryNode is the id of the node every flow starts at.
const EntryNode = "start"

// Rollback is the reserved transition target that unwinds the flow: the
// undo of every completed action runs, newest first (see saga.go).
const Rollback = "rollback"

// Spec is a flow as written: Trellis's node syntax, either one file with a
// list of nodes or a directory with one file per node (see Load).
type Spec struct {
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	// Context holds the initial values of the flow's context.
	Context map[string]any `json:"context,omitempty"`
	Nodes   []Node         `json:"nodes"`
}

// Node is one node in Trellis's node syntax. Its behaviour follows from the
// keys it sets (duck typing): do makes an action, wait, input_type or
// options an input, anything else a text node; type, when given, must
// agree.
type Node struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type,omitempty"`

	// Content is the text the node renders (the Markdown body of a node
	// file), a text/template over the context.
	Content string `json:"content,omitempty"`

	// Action.
	Do   *Call `json:"do,omitempty"`
	Undo *Call `json:"undo,omitempty"`

	// Input.
	Wait         bool     `json:"wait,omitempty"`
	InputType    string   `json:"input_type,omitempty"`
	InputOptions []string `json:"input_options,omitempty"`
	InputDefault string   `json:"input_default,omitempty"`
	InputSecret  bool     `json:"input_secret,omitempty"`
	Options      []Option `json:"options,omitempty"`
	Timeout      string   `json:"timeout,omitempty"`

	// SaveTo names the context key that receives the answer or the
	// action's result.
	SaveTo string `json:"save_to,omitempty"`

	// Context contracts.
	RequiredContext []string       `json:"required_context,omitempty"`
	DefaultContext  map[string]any `json:"default_context,omitempty"`
	ContextSchema   map[string]any `json:"context_schema,omitempty"`

	// Routes.
	To              string            `json:"to,omitempty"`
	Next            string            `json:"next,omitempty"`
	Transitions     []Transition      `json:"transitions,omitempty"`
	OnError         string            `json:"on_error,omitempty"`
	OnDenied        string            `json:"on_denied,omitempty"`
	OnTimeout       string            `json:"on_timeout,omitempty"`
	OnInterrupt     string            `json:"on_interrupt,omitempty"`
	OnSignal        map[string]string `json:"on_signal,omitempty"`
	OnSignalDefault map[string]string `json:"on_signal_default,omitempty"`

	// Accepted for compatibility with Trellis files and not interpreted:
	// per-locale messages, LLM tool listings, free metadata.
	Messages map[string]string `json:"messages,omitempty"`
	Tools    []any             `json:"tools,omitempty"`
	Metadata map[string]any    `json:"metadata,omitempty"`
}

// Call is a tool call of an action (do) or its compensation (undo). It is
// written as an object, or as the bare tool name ("do: init_db").
type Call struct {
	Name string `json:"name"`
	// Args are the tool's arguments; every string in them is a
	// text/template over the context.
	Args     map[string]any `json:"args,omitempty"`
	ID       string         `json:"id,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// UnmarshalJSON accepts a call object or a bare tool name.
func (c *Call) UnmarshalJSON(b []byte) error {
	if s, ok := jsonString(b); ok {
		*c = Call{Name: s}
		return nil
	}
	type plain Call
	return strictUnmarshal(b, (*plain)(c))
}

// Option is one answer of a choice input. It is written as the bare text,
// or as {text, to} to route that answer to a node.
type Option struct {
	Text string `json:"text"`
	To   string `json:"to,omitempty"`
}

// UnmarshalJSON accepts an option object or its bare text.
func (o *Option) UnmarshalJSON(b []byte) error {
	if s, ok := jsonString(b); ok {
		*o = Option{Text: s}
		return nil
	}
	type plain Option
	return strictUnmarshal(b, (*plain)(o))
}

// Transition is one conditional route. Transitions are tried in order and
// the first whose condition holds (or that has none) wins. Condition is a
// CEL expression over the context, with input bound to the last answer;
// "if" is accepted as its alias.
type Transition struct {
	Condition string `json:"condition,omitempty"`
	If        string `json:"if,omitempty"`
	To        string `json:"to"`
}

// cond returns the transition's condition under either key.
func (t Transition) cond() string {
	if t.Condition != "" {
		return t.Condition
	}
	return t.If
}

func jsonString(b []byte) (string, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", false
	}
	return s, true
}

// strictUnmarshal decodes b into v refusing unknown keys.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w", err)
	}
	return nil
}
