package graph

import (
	"encoding/json"
	"slices"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
)

// outcomeOf is the run's engine.Outcome, if it published one.
func outcomeOf(h *enginetest.RecordingHost) (*partialDetail, int) {
	var d *partialDetail
	n := 0
	for _, ev := range h.Events() {
		if o, ok := ev.(engine.Outcome); ok {
			n++
			d = &partialDetail{}
			if json.Unmarshal(o.Detail, d) != nil || o.Status != engine.OutcomePartial {
				return nil, -1
			}
		}
	}
	return d, n
}

func TestOutcome(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		agents  map[string]behaviour
		partial *partialDetail // nil: completed fully (or failed)
		wantErr bool
	}{{
		name: "skip-dependents with a failure and a completed branch ends partial",
		doc: `{name: skip, agents: {w: {description: breaks}}, options: {onStepFailure: skip-dependents},
			steps: [{id: bad, agent: w}, {id: dep, dependsOn: [bad]}, {id: free}]}`,
		agents:  map[string]behaviour{"w": fail},
		partial: &partialDetail{Status: StatusPartial, Completed: 1, Failed: []string{"bad"}, Skipped: []string{"dep"}},
	}, {
		name:    "every step completed: no outcome event",
		doc:     `{name: ok, steps: [{id: a}, {id: b, dependsOn: [a]}]}`,
		partial: nil,
	}, {
		name:    "a step skipped by its own condition does not make the run partial",
		doc:     `{name: cond, steps: [{id: a}, {id: b, dependsOn: [a], condition: "steps.a.content == 'nope'"}]}`,
		partial: nil,
	}, {
		name: "skip-dependents where nothing completed fails",
		doc: `{name: none, agents: {w: {description: breaks}}, options: {onStepFailure: skip-dependents},
			steps: [{id: bad, agent: w}, {id: dep, dependsOn: [bad]}]}`,
		agents:  map[string]behaviour{"w": fail},
		wantErr: true,
	}, {
		name:    "cascade keeps failing the run",
		doc:     `{name: cascade, agents: {w: {description: breaks}}, steps: [{id: bad, agent: w}, {id: free}]}`,
		agents:  map[string]behaviour{"w": fail},
		wantErr: true,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _, err := execute(t, newTestEngine(t, c.doc, newFakeAgents(c.agents)), "please")
			if (err != nil) != c.wantErr {
				t.Fatalf("Execute: %v, want error %v", err, c.wantErr)
			}
			got, n := outcomeOf(h)
			switch {
			case c.partial == nil && n != 0:
				t.Fatalf("%d outcome events (%+v), want none", n, got)
			case c.partial != nil && n != 1:
				t.Fatalf("%d outcome events, want 1", n)
			case c.partial != nil && (got.Completed != c.partial.Completed || !slices.Equal(got.Failed, c.partial.Failed) || !slices.Equal(got.Skipped, c.partial.Skipped)):
				t.Errorf("outcome %+v, want %+v", got, c.partial)
			}
			if c.partial != nil && len(stateOf(t, h).Partial) == 0 {
				t.Error("the final checkpoint does not keep the partial outcome")
			}
		})
	}
}

// A run resumed from its final checkpoint reports its partial outcome
// again: the attempt that records it may be the resumed one.
func TestPartialOutcomeRepublishedOnResume(t *testing.T) {
	doc := `{name: skip, agents: {w: {description: breaks}}, options: {onStepFailure: skip-dependents},
		steps: [{id: bad, agent: w}, {id: free}]}`
	e := newTestEngine(t, doc, newFakeAgents(map[string]behaviour{"w": fail}))
	h, _, err := execute(t, e, "please")
	if err != nil {
		t.Fatal(err)
	}
	cps := h.Checkpoints()
	last := cps[len(cps)-1]
	h2 := enginetest.NewRecordingHost()
	if _, err := e.Execute(t.Context(), engine.Run{ID: "run-1", ResumeFrom: &last}, h2, nil); err != nil {
		t.Fatal(err)
	}
	if _, n := outcomeOf(h2); n != 1 {
		t.Fatalf("resumed finished run published %d outcomes, want 1", n)
	}
}
