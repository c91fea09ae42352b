package agenttest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/agent/agenttest"
	"agentd/internal/engine"
	"agentd/internal/model"
)

// recorder is a Reporter that keeps failures instead of failing the test,
// so the suites can be shown to catch bad implementations.
type recorder struct{ failures []string }

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// runCases runs cases against a recorder and returns failures per case.
func runCases(cases []agenttest.Case) map[string][]string {
	out := make(map[string][]string)
	for _, c := range cases {
		rec := &recorder{}
		c.Check(rec)
		if len(rec.failures) > 0 {
			out[c.Name] = rec.failures
		}
	}
	return out
}

func TestGoodImplementationsPass(t *testing.T) {
	t.Run("BaseDecider", func(t *testing.T) {
		agenttest.RunDeciderSuite(t, func() agent.Decider { return agent.BaseDecider{} })
	})
	t.Run("BaseObserver", func(t *testing.T) {
		agenttest.RunObserverSuite(t, func() agent.Observer { return agent.BaseObserver{} })
	})
}

// deciderFunc adapts a function to agent.Decider for the bad examples.
type deciderFunc func(res *agent.Result) agent.FinalizeDecision

func (f deciderFunc) BeforeFinalize(_ context.Context, _ agent.RunInfo, _ *agent.Request, res *agent.Result) (agent.FinalizeDecision, error) {
	return f(res), nil
}

func TestDeciderSuiteCatchesBadDeciders(t *testing.T) {
	cases := []struct {
		name     string
		decider  agent.Decider
		failCase string
		wantMsg  string
	}{
		{"writes state", deciderFunc(func(res *agent.Result) agent.FinalizeDecision {
			if res.State != nil {
				res.State["handoff"] = "billing"
			}
			return agent.FinalizeDecision{}
		}), "DoesNotMutateInputs", "mutated Result.State"},
		{"sets committed", deciderFunc(func(res *agent.Result) agent.FinalizeDecision {
			res.Committed = false
			return agent.FinalizeDecision{DiscardOutput: true}
		}), "DoesNotMutateInputs", "mutated Result.Committed"},
		{"appends to the board", deciderFunc(func(res *agent.Result) agent.FinalizeDecision {
			if res.LastBoard != nil {
				res.LastBoard.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "x"))
			}
			return agent.FinalizeDecision{}
		}), "DoesNotMutateInputs", "mutated Result.LastBoard (content)"},
		{"rewrites a message in place", deciderFunc(func(res *agent.Result) agent.FinalizeDecision {
			if len(res.Messages) > 0 && len(res.Messages[0].Parts) > 0 {
				res.Messages[0].Parts[0].Text = "redacted"
			}
			return agent.FinalizeDecision{}
		}), "DoesNotMutateInputs", "mutated Result.Messages"},
		{"returns res.State", deciderFunc(func(res *agent.Result) agent.FinalizeDecision {
			return agent.FinalizeDecision{State: res.State}
		}), "DecisionStateIsOwnMap", "returned Result.State itself"},
		{"assumes messages", deciderFunc(func(res *agent.Result) agent.FinalizeDecision {
			return agent.FinalizeDecision{Reason: res.Messages[0].Text()}
		}), "ToleratesZeroInputs", "panicked"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			failures := runCases(agenttest.DeciderCases(func() agent.Decider { return tc.decider }))
			if !containsMsg(failures[tc.failCase], tc.wantMsg) {
				t.Fatalf("case %s: want a failure containing %q, got %q", tc.failCase, tc.wantMsg, failures)
			}
			t.Logf("caught: %s", failures[tc.failCase][0])
		})
	}
}

// badObserver lets each bad example override one hook.
type badObserver struct {
	agent.BaseObserver
	start func(req *agent.Request)
	end   func(res *agent.Result)
}

func (o badObserver) OnRunStart(_ context.Context, _ agent.RunInfo, req *agent.Request) {
	if o.start != nil {
		o.start(req)
	}
}

func (o badObserver) OnRunEnd(_ context.Context, _ agent.RunInfo, res *agent.Result) {
	if o.end != nil {
		o.end(res)
	}
}

func TestObserverSuiteCatchesBadObservers(t *testing.T) {
	cases := []struct {
		name     string
		observer agent.Observer
		failCase string
		wantMsg  string
	}{
		{"dereferences a nil result", badObserver{end: func(res *agent.Result) { _ = res.Status }},
			"ToleratesNilAndZeroInputs", "OnRunEnd(nil result) panicked"},
		{"marks the result committed", badObserver{end: func(res *agent.Result) {
			if res != nil {
				res.Committed = true
			}
		}}, "DoesNotMutateInputs", "mutated Result.Committed"},
		{"rewrites request inputs", badObserver{start: func(req *agent.Request) {
			if req != nil && req.Inputs != nil {
				req.Inputs["tier"] = "bronze"
			}
		}}, "DoesNotMutateInputs", "mutated the Request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			failures := runCases(agenttest.ObserverCases(func() agent.Observer { return tc.observer }))
			if !containsMsg(failures[tc.failCase], tc.wantMsg) {
				t.Fatalf("case %s: want a failure containing %q, got %q", tc.failCase, tc.wantMsg, failures)
			}
			t.Logf("caught: %s", failures[tc.failCase][0])
		})
	}
}

func containsMsg(msgs []string, sub string) bool {
	for _, m := range msgs {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}
