package judge_test

import (
	"context"
	"errors"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/agent/judge"
	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

func scriptedJudge(t *testing.T, rules ...scripted.Rule) *judge.Judge {
	t.Helper()
	p, err := scripted.New(scripted.Config{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return &judge.Judge{Provider: p}
}

func completed(answer string) *agent.Result {
	return &agent.Result{Status: agent.StatusCompleted, Attempts: 1, Messages: []model.Message{model.NewText(model.RoleAssistant, answer)}}
}

func TestJudgeDecides(t *testing.T) {
	j := scriptedJudge(t,
		scripted.Rule{Match: `(?s)## Answer\nfine`, Reply: "ACCEPT"},
		scripted.Rule{Match: `(?s)## Answer\nvague`, Reply: "REVISE: name the city."},
		scripted.Rule{Reply: "I am not sure this is right"},
	)
	req := &agent.Request{Message: model.NewText(model.RoleUser, "where is the tower?")}
	cases := []struct {
		answer, feedback string
		revise           bool
	}{
		{"fine, in Paris", "", false},
		{"vague: somewhere", "name the city.", true},
		{"odd", "I am not sure this is right", true}, // off format: never an accept
	}
	for _, c := range cases {
		dec, err := j.BeforeFinalize(context.Background(), agent.RunInfo{}, req, completed(c.answer))
		if err != nil {
			t.Fatal(err)
		}
		if dec.Revise != c.revise || dec.State[agent.ReviseFeedbackStateKey] != nil != c.revise ||
			(c.revise && dec.State[agent.ReviseFeedbackStateKey] != c.feedback) {
			t.Errorf("answer %q: decision %+v, want revise %v with feedback %q", c.answer, dec, c.revise, c.feedback)
		}
	}
	// A failed attempt is not judged.
	dec, err := j.BeforeFinalize(context.Background(), agent.RunInfo{}, req, &agent.Result{Status: agent.StatusFailed})
	if err != nil || dec.Revise {
		t.Fatalf("a failed attempt: %+v, %v; want no opinion", dec, err)
	}
}

type downProvider struct{}

func (downProvider) Stream(context.Context, llm.Request) (llm.Stream, error) {
	return nil, errors.New("judge endpoint unreachable")
}

// A judge that cannot answer fails the decision: the answer is never let
// through unjudged.
func TestJudgeUnreachable(t *testing.T) {
	j := &judge.Judge{Provider: downProvider{}}
	_, err := j.BeforeFinalize(context.Background(), agent.RunInfo{}, &agent.Request{}, completed("x"))
	if err == nil {
		t.Fatal("an unreachable judge accepted the answer")
	}
}
