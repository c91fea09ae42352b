package agui

import (
	"encoding/json"
	"strings"

	"agentd/internal/runtime"
)

// runState is the shared state a UI draws a workflow from: the plan the
// graph engine published and the status of each of its steps,
//
//	{"plan": <the plan event's plan>, "steps": {"<step id>": {"status": "pending"}}}
//
// sent as STATE_SNAPSHOT when the plan is published and kept current with
// STATE_DELTA patches as its steps start ("running") and end ("completed",
// "failed", or the status the step reports). A flow's state is
// {"flow": {"node": "<node>", "visited": ["<node>", …]}}.
type runState struct {
	steps map[string]bool // the plan's step ids
	flow  bool
}

// plan answers a plan event: the state's snapshot.
func (t *translator) plan(le logEvent) []Event {
	var p struct {
		Steps []struct {
			ID string `json:"id"`
		} `json:"steps"`
	}
	if json.Unmarshal(le.Plan, &p) != nil || len(p.Steps) == 0 {
		return []Event{custom(le)}
	}
	t.state = &runState{steps: map[string]bool{}}
	steps := map[string]any{}
	for _, s := range p.Steps {
		t.state.steps[s.ID] = true
		steps[s.ID] = map[string]string{"status": "pending"}
	}
	return []Event{{Type: StateSnapshot, Snapshot: map[string]any{"plan": le.Plan, "steps": steps}}}
}

// step is the state patch of a workflow step's event, if the step is one
// of the plan's.
func (s *runState) step(typ string, p stepPayload) *Event {
	if s == nil || s.steps == nil || !s.steps[p.Detail.Step] {
		return nil
	}
	status := "running"
	switch typ {
	case runtime.EventStepComplete:
		status = "completed"
		if p.Detail.Status != "" {
			status = p.Detail.Status
		}
	case runtime.EventStepError:
		status = "failed"
	}
	path := "/steps/" + pointerEscape(p.Detail.Step) + "/status"
	return &Event{Type: StateDelta, Delta: []PatchOp{{Op: "replace", Path: path, Value: status}}}
}

// flowNode is the state change of a flow entering node (the step's
// detail names it; else its actor).
func (t *translator) flowNode(actor string) []Event {
	if t.state == nil {
		t.state = &runState{flow: true}
		return []Event{{Type: StateSnapshot, Snapshot: map[string]any{"flow": map[string]any{"node": actor, "visited": []string{actor}}}}}
	}
	if !t.state.flow {
		return nil
	}
	return []Event{{Type: StateDelta, Delta: []PatchOp{
		{Op: "replace", Path: "/flow/node", Value: actor},
		{Op: "add", Path: "/flow/visited/-", Value: actor},
	}}}
}

// pointerEscape escapes a JSON Pointer reference token (RFC 6901).
func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
