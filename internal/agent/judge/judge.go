package judge

import (
	"context"
	"fmt"
	"strings"

	"agentd/internal/agent"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// DefaultInstructions is the judge's system prompt when Judge.Instructions
// is empty.
const DefaultInstructions = "You review an assistant's answer to a user's request. " +
	"Reply ACCEPT if the answer is correct, complete and responsive. " +
	"Otherwise reply REVISE: followed by what the assistant must change, in one or two sentences."

// Judge decides whether answers are acceptable. It is safe for concurrent
// use.
type Judge struct {
	// Provider streams the judge's replies; Model names its model (empty:
	// the provider's default).
	Provider llm.Provider
	Model    string
	// Instructions replace DefaultInstructions.
	Instructions string
}

var _ agent.Decider = (*Judge)(nil)

// BeforeFinalize asks the judge about a completed answer; other outcomes
// are not its business.
func (j *Judge) BeforeFinalize(ctx context.Context, _ agent.RunInfo, req *agent.Request, res *agent.Result) (agent.FinalizeDecision, error) {
	if res.Status != agent.StatusCompleted {
		return agent.FinalizeDecision{}, nil
	}
	reply, err := j.ask(ctx, req.Message, answerOf(res.Messages))
	if err != nil {
		return agent.FinalizeDecision{}, fmt.Errorf("judge: %w", err)
	}
	feedback, accepted := verdict(reply)
	if accepted {
		return agent.FinalizeDecision{Reason: "judge: accepted"}, nil
	}
	return agent.FinalizeDecision{
		Revise: true,
		Reason: "judge: " + feedback,
		State:  map[string]any{agent.ReviseFeedbackStateKey: feedback},
	}, nil
}

// ask sends the request and the answer to the judge and returns its reply.
func (j *Judge) ask(ctx context.Context, request model.Message, answer string) (string, error) {
	instructions := j.Instructions
	if instructions == "" {
		instructions = DefaultInstructions
	}
	prompt := "## Request\n" + textOf(request) + "\n\n## Answer\n" + answer
	s, err := j.Provider.Stream(ctx, llm.Request{Model: j.Model, Messages: []model.Message{
		model.NewText(model.RoleSystem, instructions),
		model.NewText(model.RoleUser, prompt),
	}})
	if err != nil {
		return "", err
	}
	defer s.Close()
	msg, _, _, err := llm.Collect(s)
	if err != nil {
		return "", err
	}
	return msg.Text(), nil
}

// verdict reads a reply: ACCEPT, or REVISE: feedback; anything else is
// feedback too.
func verdict(reply string) (feedback string, accepted bool) {
	r := strings.TrimSpace(reply)
	upper := strings.ToUpper(r)
	if strings.HasPrefix(upper, "ACCEPT") {
		return "", true
	}
	if strings.HasPrefix(upper, "REVISE") {
		r = strings.TrimLeft(strings.TrimSpace(r[len("REVISE"):]), ":- ")
	}
	if r == "" {
		r = "the reviewer did not accept the answer"
	}
	return r, false
}

// answerOf is the text of the last assistant message of an attempt (its
// data parts as JSON).
func answerOf(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			if t := textOf(msgs[i]); t != "" {
				return t
			}
		}
	}
	return ""
}

// textOf joins a message's text and data parts.
func textOf(m model.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		switch p.Type {
		case model.PartText:
			b.WriteString(p.Text)
		case model.PartData:
			b.Write(p.Data)
		}
	}
	return b.String()
}
