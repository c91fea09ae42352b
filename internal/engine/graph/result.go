package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agentd/internal/model"
)

// StepStatus is the outcome of a step (spec §5: the values CEL sees in
// steps.<id>.status).
type StepStatus string

// The step outcomes.
const (
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
	StepCancelled StepStatus = "cancelled"
)

// StepResult is what one step, iteration or judge produced. Results are
// kept by namespaced id (`plan`, `each[2]`, `each[2].verify`,
// `review#1.fix`, `review#1/judge`, `deploy.run-tests`) in the checkpoint
// payload, so a resumed run skips every step that has one.
type StepResult struct {
	Status  StepStatus     `json:"status"`
	Content string         `json:"content,omitempty"`
	Result  map[string]any `json:"result,omitempty"`
	Error   string         `json:"error,omitempty"`
	// SkipReason is "condition" or "dependency" for a skipped step.
	SkipReason string           `json:"skip_reason,omitempty"`
	Attempts   int              `json:"attempts,omitempty"`
	Usage      model.TokenUsage `json:"usage,omitzero"`
	DurationMS int64            `json:"duration_ms,omitempty"`
	// PreserveContent marks content aggregated on purpose (a loop with
	// outputMode: cumulative): dependents receive it whole, past
	// MaxDependencyBytes and MaxPromptBytes.
	PreserveContent bool `json:"preserve_content,omitempty"`
}

// failedLike reports whether dependents treat r as a failure: a failed
// step, or one cancelled or skipped because a dependency failed.
func (r *StepResult) failedLike() bool {
	return r.Status == StepFailed || r.Status == StepCancelled ||
		r.Status == StepSkipped && r.SkipReason == skipDependency
}

const (
	skipCondition  = "condition"
	skipDependency = "dependency"
)

func (r *StepResult) view() stepView {
	return stepView{Content: r.Content, Status: string(r.Status), Result: r.Result}
}

// errNoSubmit is the failure of a step whose agent has a resultSchema and
// never made a valid submit_result call (spec §4).
var errNoSubmit = errors.New("resultSchema defined but submit_result never called")

// submittedResult finds the first valid submit_result call among msgs, the
// messages a step's agent produced. With no schema there is none to find.
func submittedResult(a *Agent, msgs []model.Message) (map[string]any, error) {
	if a == nil || a.schema == nil {
		return nil, nil
	}
	var last error
	for _, m := range msgs {
		for _, c := range m.ToolCalls() {
			if c.Name != SubmitResultTool {
				continue
			}
			var args map[string]any
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				last = fmt.Errorf("submit_result arguments are not a JSON object: %v", err)
				continue
			}
			if err := a.schema.Validate(any(args)); err != nil {
				last = fmt.Errorf("submit_result arguments do not match resultSchema: %v", err)
				continue
			}
			return args, nil
		}
	}
	if last != nil {
		return nil, fmt.Errorf("%w (last attempt: %v)", errNoSubmit, last)
	}
	return nil, errNoSubmit
}

// contentOf concatenates the text of the assistant messages in msgs.
func contentOf(msgs []model.Message) string {
	var parts []string
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			if t := strings.TrimSpace(m.Text()); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}
