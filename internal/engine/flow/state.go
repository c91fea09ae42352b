package flow

import (
	"bytes"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"
)

// state is a run's flow state, the payload of every checkpoint: where the
// run is, what it knows, where it has been and what it has done. It is
// written before a node executes, so a resumed run executes the node it
// was in — with the same visit count, hence the same idempotency keys.
type state struct {
	// Node is the node being executed; Visit counts its entries so far,
	// this one included.
	Node  string `json:"node"`
	Visit int    `json:"visit"`
	// Context is the flow's user space; Sys the engine's namespace (ans,
	// error, rolled_back, …), read-only to templates.
	Context map[string]any `json:"context"`
	Sys     map[string]any `json:"sys"`
	// Input is the last answer or action result, bound to input in
	// conditions.
	Input any `json:"input,omitempty"`
	// History is the path taken, one entry per node entered.
	History []string       `json:"history"`
	Visits  map[string]int `json:"visits"`
	// Done lists the completed actions that declare an undo, oldest
	// first: what a rollback compensates.
	Done []done `json:"done,omitempty"`
	// Pending is the tool call under way when the checkpoint was taken: a
	// resume repeats it with the same key.
	Pending *pending `json:"pending_tool_call,omitempty"`
	// Waiting records when the node started waiting for its answer, for
	// its timeout.
	Waiting *waiting `json:"waiting,omitempty"`
	// Signal is the signal whose handler the run follows; a node that
	// then needs input ends the run instead.
	Signal *handled `json:"signal,omitempty"`
	// Rollback is set while and after the flow unwinds.
	Rollback *rollback `json:"rollback,omitempty"`
	// Ended is set once the flow has finished; Failure says why it failed.
	Ended   bool   `json:"ended,omitempty"`
	Failure string `json:"failure,omitempty"`
}

// done is one completed action with an undo.
type done struct {
	Node  string `json:"node"`
	Visit int    `json:"visit"`
}

// pending is a tool call in flight.
type pending struct {
	Tool string `json:"tool"`
	Key  string `json:"idempotency_key"`
	Undo bool   `json:"undo,omitempty"`
}

// waiting is an input node's pending question.
type waiting struct {
	Node  string    `json:"node"`
	Visit int       `json:"visit"`
	Since time.Time `json:"since"`
}

// handled is a signal being handled.
type handled struct {
	Name   string `json:"name"`
	Cause  string `json:"cause,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// rollback is an unwinding: why, and the compensations that failed.
type rollback struct {
	// Reason is the action failure that started it; empty for an
	// explicit "to: rollback".
	Reason      string `json:"reason,omitempty"`
	ReasonClass string `json:"reason_class,omitempty"`
	// ReasonPublic says the failure's message may reach clients as is
	// (errdefs.IsPublic): the run's error keeps it visible.
	ReasonPublic bool     `json:"reason_public,omitempty"`
	From         string   `json:"from"`
	Failures     []string `json:"failures,omitempty"`
}

// newState is the state of a fresh run of f, with initial values over
// the flow's own context.
func newState(f *Flow, initial map[string]any) *state {
	ctx := normalise(f.context).(map[string]any)
	if ctx == nil {
		ctx = map[string]any{}
	}
	maps.Copy(ctx, initial)
	s := &state{Context: ctx, Sys: map[string]any{}, Visits: map[string]int{}}
	s.enter(EntryNode)
	return s
}

// enter moves the run to node id.
func (s *state) enter(id string) {
	s.Node = id
	s.Visits[id]++
	s.Visit = s.Visits[id]
	s.History = append(s.History, id)
	s.Waiting = nil
	s.Pending = nil
}

// decodeState decodes a checkpoint payload, turning JSON numbers back
// into int64 when they have no fraction and float64 otherwise.
func decodeState(b []byte) (*state, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var s state
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	s.Context, _ = normalise(s.Context).(map[string]any)
	if s.Context == nil {
		s.Context = map[string]any{}
	}
	s.Sys, _ = normalise(s.Sys).(map[string]any)
	if s.Sys == nil {
		s.Sys = map[string]any{}
	}
	s.Input = normalise(s.Input)
	if s.Visits == nil {
		s.Visits = map[string]int{}
	}
	return &s, nil
}

// normalise copies v, a decoded JSON value, giving numbers the Go types
// conditions and templates expect: int64 for whole numbers written
// without a fraction or exponent, float64 for the rest; Go ints become
// int64 too.
func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	case json.Number:
		if !strings.ContainsAny(x.String(), ".eE") {
			if n, err := x.Int64(); err == nil {
				return n
			}
		}
		f, _ := strconv.ParseFloat(x.String(), 64)
		return f
	case int:
		return int64(x)
	case float64:
		if x == float64(int64(x)) && x < 1<<53 && x > -(1<<53) {
			return int64(x)
		}
		return x
	}
	return v
}

// decodeJSON decodes a JSON document into a normalised value.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalise(v), nil
}
