package loop

import (
	"context"
	"errors"
	"fmt"
	"io"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// Step kinds of the loop's step events.
const (
	StepKindModel = "model"
	StepKindTool  = "tool"
)

// modelDetail is the Detail of a model step's events.
type modelDetail struct {
	Iteration    int    `json:"iteration"`
	ToolCalls    int    `json:"tool_calls,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	// Model and the token counts are known once the turn ended: they make
	// the run's trajectory (runtime.Trajectory).
	Model        string `json:"model,omitempty"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
}

// modelTurn streams iteration n's model turn, publishing each text delta
// as it arrives, and publishes its tool calls. It returns the assistant
// message — the caller appends it to the main channel once its calls have
// passed their gates — and the turn's usage. A turn cut short (interrupt, cancellation, provider failure)
// leaves its streamed text on the board as a partial message and returns
// the stop reason or the classified provider error.
func (x *execution) modelTurn(n int) (model.Message, model.TokenUsage, error) {
	history, err := x.contextMessages(n)
	if err != nil {
		return model.Message{}, model.TokenUsage{}, err
	}
	x.publish(engine.StepStarted{Step: x.step(StepKindModel, modelDetail{Iteration: n})})

	var acc llm.Accumulator
	if err := x.stream(&acc, history); err != nil {
		x.appendPartial(&acc)
		if stop := x.stopped(); stop != nil {
			err = stop
		} else {
			err = fmt.Errorf("loop agent %q: model turn %d: %w", x.actor, n, err)
		}
		u := acc.Usage()
		x.publish(engine.StepFailed{Step: x.step(StepKindModel, modelDetail{Iteration: n, Model: x.e.cfg.Model,
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}), Err: err})
		return model.Message{}, u, err
	}

	msg := acc.Message()
	calls := msg.ToolCalls()
	for _, c := range calls {
		x.publish(engine.ToolCall{Actor: x.actor, ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	u := acc.Usage()
	x.finish = acc.FinishReason()
	x.cm.observe(u)
	x.publish(engine.StepCompleted{Step: x.step(StepKindModel, modelDetail{
		Iteration: n, ToolCalls: len(calls), FinishReason: acc.FinishReason(),
		Model: x.e.cfg.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
	})})
	return msg, acc.Usage(), nil
}

// step names a step of kind with detail for the step events.
func (x *execution) step(kind string, detail any) engine.Step {
	return engine.Step{RunID: x.run.ID, Actor: x.actor, Kind: kind, Detail: detail}
}

// publish hands ev to the host. Publish errors are observability
// problems, never control flow.
func (x *execution) publish(ev engine.Event) { _ = x.host.Publish(x.ctx, ev) }

// stream runs one provider turn under the interruptible context, folding
// chunks into acc and publishing text deltas at once: a subscriber sees
// the first token before the turn ends.
func (x *execution) stream(acc *llm.Accumulator, history []model.Message) error {
	var ctx context.Context = &x.work
	if d := x.e.cfg.TurnTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	s, err := x.e.cfg.Provider.Stream(ctx, x.request(history))
	if err != nil {
		return x.turnTimedOut(ctx, err)
	}
	defer s.Close()
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return x.turnTimedOut(ctx, err)
		}
		acc.Add(c)
		if c.Reasoning != "" {
			x.publish(engine.Reasoning{Actor: x.actor, Text: c.Reasoning})
		}
		if c.Text != "" {
			x.publish(engine.Token{Actor: x.actor, Text: c.Text})
		}
	}
}

// request builds the model request for history, the compacted and recent
// regions of the main channel (contextMessages).
func (e *Engine) request(history []model.Message, specs []llm.ToolSpec, runID, agentID string) llm.Request {
	msgs := history
	if e.cfg.SystemPrompt != "" {
		msgs = make([]model.Message, 0, len(history)+1)
		msgs = append(msgs, model.NewText(model.RoleSystem, e.cfg.SystemPrompt))
		msgs = append(msgs, history...)
	}
	return llm.Request{
		Model:       e.cfg.Model,
		Messages:    msgs,
		Tools:       specs,
		Temperature: e.cfg.Temperature,
		MaxTokens:   e.cfg.MaxTokens,
		TopP:        e.cfg.TopP,
		Metadata:    map[string]string{engine.AttrRunID: runID, engine.AttrAgentID: agentID},
	}
}

// turnTimedOut names the turn timeout as the cause of err when the turn's
// own deadline passed (and not the run's).
func (x *execution) turnTimedOut(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && x.work.Err() == nil {
		return errdefs.Timeoutf("the model turn took longer than its turn_timeout of %v", x.e.cfg.TurnTimeout)
	}
	return err
}

// appendPartial keeps the text streamed before a turn stopped, so the
// board matches what subscribers saw. Tool calls of a cut turn are
// dropped: they may be incomplete and were never run.
func (x *execution) appendPartial(acc *llm.Accumulator) {
	text := acc.Message().Text()
	if text == "" {
		return
	}
	msg := model.NewText(model.RoleAssistant, text)
	msg.Metadata = map[string]any{MetadataPartial: true}
	x.appendMessage(msg)
}
