package goal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// plan asks the planner for a workflow until it answers a valid one (at
// most MaxRetries times again) and publishes it; the phase that follows
// checkpoints it before anything else happens.
func (x *execution) plan() error {
	goal := lastUserText(x.board.Channel(engine.MainChannel))
	if strings.TrimSpace(goal) == "" {
		return errdefs.Validationf("goal agent %q: the message states no goal (no text)", x.actor)
	}
	msgs := []model.Message{
		model.NewText(model.RoleSystem, x.e.plannerPrompt()),
		model.NewText(model.RoleUser, goal),
	}
	var problems error
	for attempt := 1; attempt <= x.e.cfg.MaxRetries+1; attempt++ {
		answer, err := x.askPlanner(attempt, msgs)
		if err != nil {
			return err
		}
		doc, err := x.e.check([]byte(planText(answer.Text())))
		if err == nil {
			x.st.Phase, x.st.Plan = phaseRunning, doc
			if x.e.cfg.Approval {
				x.st.Phase = phaseApproval
			}
			x.publishPlan()
			return nil
		}
		problems = err
		msgs = append(msgs, answer, model.NewText(model.RoleUser, retryText(err)))
	}
	return errdefs.Newf(errdefs.ClassModelOutput, "goal agent %q: the planner wrote no valid workflow in %d answers; the last one's problems:\n%v",
		x.actor, x.e.cfg.MaxRetries+1, problems)
}

// askPlanner runs one planner turn as a step of the run ("<agent>.node.planner").
func (x *execution) askPlanner(attempt int, msgs []model.Message) (model.Message, error) {
	step := engine.Step{Actor: engine.NodeActor(x.actor, "planner"), Kind: "model", Detail: map[string]any{"phase": "planning", "attempt": attempt}}
	x.publish(engine.StepStarted{Step: step})
	var answer model.Message
	err := x.watchInterrupts(func(ctx context.Context) error {
		s, err := x.e.cfg.Planner.Stream(ctx, llm.Request{Model: x.e.cfg.Model, Messages: msgs,
			Metadata: map[string]string{engine.AttrAgentID: x.actor, engine.AttrRunID: x.run.ID}})
		if err != nil {
			return err
		}
		var usage model.TokenUsage
		answer, usage, _, err = llm.Collect(s)
		if rerr := x.host.ReportUsage(x.ctx, x.e.cfg.Model, usage); errdefs.Is(rerr, errdefs.ClassBudgetExceeded) && err == nil {
			err = rerr
		}
		return err
	})
	if err != nil {
		x.publish(engine.StepFailed{Step: step, Err: err})
		if isStop(err) {
			return answer, err
		}
		return answer, fmt.Errorf("goal agent %q: planner: %w", x.actor, err)
	}
	x.publish(engine.StepCompleted{Step: step})
	answer.Role = model.RoleAssistant
	return answer, nil
}

// plannerPrompt is the planner's system prompt: the format, the agents it
// may use, the configured instructions.
func (e *Engine) plannerPrompt() string {
	var b strings.Builder
	b.WriteString("You plan work. Turn the user's goal into one workflow in zenflow's spec v1 format, written in YAML: " +
		"a mapping with name, description, steps and optionally options. Each step has an id (letters, digits, _ and -), " +
		"an agent, instructions, and dependsOn (the ids of the steps it needs); steps without dependencies run in parallel. " +
		"Every step names one of these agents:\n")
	for _, a := range e.cfg.Agents {
		fmt.Fprintf(&b, "- %s: %s\n", a.ID, a.Description)
	}
	b.WriteString("You need not declare the agents. Answer with the workflow only, in one ```yaml code block.")
	if e.cfg.Instructions != "" {
		b.WriteString("\n\n" + e.cfg.Instructions)
	}
	return b.String()
}

// retryText tells the planner what was wrong with its workflow.
func retryText(problems error) string {
	return "The workflow is not valid:\n" + problemLines(problems) + "\nAnswer with the corrected workflow only."
}

// problemLines lists a check's problems, one "- " line each.
func problemLines(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = "- " + l
	}
	return strings.Join(lines, "\n")
}

// planText is the workflow in a planner's answer: the body of its first
// fenced code block, or the whole answer.
func planText(answer string) string {
	t := strings.TrimSpace(answer)
	start := strings.Index(t, "```")
	if start < 0 {
		return t
	}
	rest := t[start+3:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:] // the fence's language tag
	}
	if end := strings.Index(rest, "```"); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

func lastUserText(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

// publishPlan shows the plan: a plan event shaped as the graph engine's
// (workflow, steps), with the document itself under "document", and the
// "plan" artifact (the workflow as YAML, and as data), which faces
// without a rendering of plan events (A2A, MCP) show.
func (x *execution) publishPlan() {
	wf, err := parsePlan(x.st.Plan)
	if err != nil {
		return
	}
	type node struct {
		ID        string   `json:"id"`
		Agent     string   `json:"agent,omitempty"`
		DependsOn []string `json:"dependsOn,omitempty"`
		Kind      string   `json:"kind"`
	}
	plan := struct {
		Workflow string          `json:"workflow"`
		Steps    []node          `json:"steps"`
		Goal     bool            `json:"goal"`
		Status   string          `json:"status"`
		Document json.RawMessage `json:"document"`
	}{Workflow: wf.Name, Goal: true, Status: x.st.Phase, Document: x.st.Plan}
	for _, s := range wf.Steps {
		kind := "agent"
		if s.Loop != nil {
			kind = "loop"
		}
		plan.Steps = append(plan.Steps, node{ID: s.ID, Agent: s.Agent, DependsOn: s.DependsOn, Kind: kind})
	}
	if b, err := json.Marshal(plan); err == nil {
		x.publish(engine.Plan{Actor: x.actor, Plan: b})
	}
	x.publish(engine.ArtifactUpdate{LastChunk: true, Artifact: model.Artifact{
		ID: "goal-plan", Name: "plan", Description: "The workflow the goal agent planned",
		Parts: []model.Part{model.TextPart(yamlOf(x.st.Plan)), {Type: model.PartData, Data: x.st.Plan}},
	}})
}
