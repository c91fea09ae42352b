package api_test

import (
	"net/http"
	"strings"
	"testing"

	"agentd/internal/api"
	"agentd/internal/runtime"
)

// A run's trajectory lists its model and tool calls in order: the model
// asking for the calculator, the call with its arguments and result, and
// the model's answer, each with its duration; unknown runs are 404.
func TestTrajectory(t *testing.T) {
	e := newEnv(t, api.Options{})
	run := decode[api.RunView](t, e.do(http.MethodPost, "/v1/agents/assistant/messages", map[string]any{"text": "calculate 2*(3+4)"}), http.StatusOK)
	tr := decode[runtime.Trajectory](t, e.do(http.MethodGet, "/v1/runs/"+run.ID+"/trajectory", nil), http.StatusOK)
	var kinds []string
	for _, s := range tr.Steps {
		kinds = append(kinds, s.Type)
		if s.DurationMS < 0 || s.StartedAt.IsZero() || s.Attempt != 1 {
			t.Errorf("step %+v: want a start time, a duration and attempt 1", s)
		}
	}
	if strings.Join(kinds, ",") != "model,tool,model" {
		t.Fatalf("steps %v, want model, tool, model: %+v", kinds, tr.Steps)
	}
	call, answer := tr.Steps[1], tr.Steps[2]
	if call.Tool != "calculator" || call.CallID == "" || !strings.Contains(string(call.Arguments), "2*(3+4)") || call.Result != "14" {
		t.Errorf("tool step %+v, want the calculator's call with its arguments and result 14", call)
	}
	if tr.Steps[0].ToolCalls != 1 || answer.FinishReason == "" || answer.InputTokens == 0 {
		t.Errorf("model steps %+v / %+v, want one tool call asked, then an answer with its tokens", tr.Steps[0], answer)
	}
	if tr.Usage.TotalTokens == 0 {
		t.Errorf("usage %+v, want the run's totals", tr.Usage)
	}
	problem(t, e.do(http.MethodGet, "/v1/runs/nope/trajectory", nil), http.StatusNotFound, "")
}
