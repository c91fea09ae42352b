package agent_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/agent/agenttest"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

func TestDeciderMerge(t *testing.T) {
	cases := []struct {
		name          string
		engineErr     error
		decisions     []agent.FinalizeDecision
		wantCommitted bool
		wantReason    any
		wantState     map[string]any
	}{
		{name: "no deciders, completed", wantCommitted: true},
		{name: "no opinion", decisions: []agent.FinalizeDecision{{}, {}}, wantCommitted: true},
		{name: "any discard wins", decisions: []agent.FinalizeDecision{{}, {DiscardOutput: true, Reason: "moderation"}, {}},
			wantReason: "moderation"},
		{name: "first non-empty reason wins", decisions: []agent.FinalizeDecision{{}, {Reason: "first"}, {DiscardOutput: true, Reason: "second"}},
			wantReason: "first"},
		{name: "first state writer wins", wantCommitted: true, decisions: []agent.FinalizeDecision{
			{State: map[string]any{"k": 1, "a": "x"}}, {State: map[string]any{"k": 2, "b": "y"}}},
			wantState: map[string]any{"k": 1, "a": "x", "b": "y"}},
		{name: "run owns the reason key", wantCommitted: true, decisions: []agent.FinalizeDecision{
			{State: map[string]any{agent.FinalizeReasonStateKey: "forged"}, Reason: "real"}}, wantReason: "real"},
		{name: "failed stays uncommitted", engineErr: errors.New("boom"), decisions: []agent.FinalizeDecision{{Reason: "x"}},
			wantReason: "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ag := supportAgent()
			for _, d := range tc.decisions {
				ag.Deciders = append(ag.Deciders, decision{dec: d})
			}
			res, err := agent.Run(context.Background(), ag, replyEngine(nil, "x", tc.engineErr), userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Committed != tc.wantCommitted {
				t.Errorf("Committed = %v, want %v", res.Committed, tc.wantCommitted)
			}
			if got := res.State[agent.FinalizeReasonStateKey]; got != tc.wantReason {
				t.Errorf("finalize_reason = %v, want %v", got, tc.wantReason)
			}
			for k, v := range tc.wantState {
				if res.State[k] != v {
					t.Errorf("State[%q] = %v, want %v", k, res.State[k], v)
				}
			}
		})
	}
}

func TestDeciderErrorShortCircuits(t *testing.T) {
	tr := &trace{}
	sentinel := errdefs.Forbiddenf("policy service refused")
	ag := supportAgent()
	ag.Deciders = []agent.Decider{decision{tr: tr, dec: agent.FinalizeDecision{Reason: "agent-scoped"}}}
	ag = hooked(ag, []agent.Observer{traceObserver{tr, ""}},
		decision{tr: tr, err: sentinel}, decision{tr: tr, dec: agent.FinalizeDecision{Revise: true}})
	res, err := agent.Run(context.Background(), ag, replyEngine(tr, "answer", nil), userRequest("hi"),
		agent.WithMaxRevise(3))
	if !errors.Is(err, sentinel) || !errdefs.IsForbidden(err) {
		t.Fatalf("err = %v, want the decider's Forbidden error", err)
	}
	if res == nil || res.Status != agent.StatusCompleted || len(res.Messages) != 1 || res.Attempts != 1 {
		t.Fatalf("res = %+v, want the populated completed result", res)
	}
	if res.Committed {
		t.Error("Committed = true after a decider error")
	}
	if _, ok := res.State[agent.FinalizeReasonStateKey]; ok {
		t.Error("a partial merge was applied despite the error")
	}
	want := []string{"start", "execute", "decide:1", "decide:1", "end:completed"}
	if got := tr.list(); !slices.Equal(got, want) {
		t.Errorf("trace = %q, want %q (the decider after the failing one must not run)", got, want)
	}
}

func TestDeciderPanicIsInternalError(t *testing.T) {
	res, err := agent.Run(context.Background(), hooked(supportAgent(), nil, panicDecider{}), replyEngine(nil, "x", nil), userRequest("hi"))
	if !errdefs.IsInternal(err) || res == nil {
		t.Fatalf("Run = %v, %v; want a result and an Internal error", res, err)
	}
}

type panicDecider struct{}

func (panicDecider) BeforeFinalize(context.Context, agent.RunInfo, *agent.Request, *agent.Result) (agent.FinalizeDecision, error) {
	panic("boom")
}

func TestDiscardOnInterruptCauses(t *testing.T) {
	d := agent.NewDiscardOnInterruptCauses("barge-in", engine.CauseUserInput, engine.CauseUserCancel)
	cases := []struct {
		name string
		res  *agent.Result
		want agent.FinalizeDecision
	}{
		{"barge-in", &agent.Result{Status: agent.StatusInterrupted, Cause: engine.CauseUserInput},
			agent.FinalizeDecision{DiscardOutput: true, Reason: "barge-in"}},
		{"user cancel", &agent.Result{Status: agent.StatusInterrupted, Cause: engine.CauseUserCancel},
			agent.FinalizeDecision{DiscardOutput: true, Reason: "barge-in"}},
		{"shutdown keeps output", &agent.Result{Status: agent.StatusInterrupted, Cause: engine.CauseHostShutdown}, agent.FinalizeDecision{}},
		{"completed", &agent.Result{Status: agent.StatusCompleted}, agent.FinalizeDecision{}},
		{"nil result", nil, agent.FinalizeDecision{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.BeforeFinalize(context.Background(), agent.RunInfo{}, &agent.Request{}, tc.res)
			if err != nil || got.DiscardOutput != tc.want.DiscardOutput || got.Reason != tc.want.Reason {
				t.Fatalf("BeforeFinalize = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	var zero agent.DiscardOnInterruptCauses
	if got, _ := zero.BeforeFinalize(context.Background(), agent.RunInfo{}, nil,
		&agent.Result{Status: agent.StatusInterrupted, Cause: engine.CauseUserInput}); got.DiscardOutput {
		t.Error("the zero value matched a cause")
	}
}

func TestDecidersPassContractSuite(t *testing.T) {
	cases := map[string]func() agent.Decider{
		"BaseDecider":              func() agent.Decider { return agent.BaseDecider{} },
		"DiscardOnInterruptCauses": func() agent.Decider { return agent.NewDiscardOnInterruptCauses("barge-in", engine.CauseUserInput) },
		"HandoffDecider": func() agent.Decider {
			return agent.HandoffDecider([]agent.Handoff{{ToAgentID: "billing"}, {ToAgentID: "tech"}})
		},
	}
	for name, factory := range cases {
		t.Run(name, func(t *testing.T) { agenttest.RunDeciderSuite(t, factory) })
	}
}

func TestBaseObserverPassesContractSuite(t *testing.T) {
	agenttest.RunObserverSuite(t, func() agent.Observer { return agent.BaseObserver{} })
}
