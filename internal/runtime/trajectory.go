package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"agentd/internal/model"
	"agentd/internal/run"
)

// A run's trajectory is what its agent did, step by step: every model call
// (model, tokens, latency, finish reason) and every tool call (name,
// arguments, result or error, duration). It is read from the run's event
// log, which holds all of it — the step events with their details and
// times, the tool calls and results as deltas — so it is stored with the
// run on every store and survives every failover, at no cost to a run.

// Trajectory is the answer of GET /v1/runs/{id}/trajectory.
type Trajectory struct {
	RunID string           `json:"run_id"`
	Steps []TrajectoryStep `json:"steps"`
	// Usage totals the run's token use (as the task records it).
	Usage model.TokenUsage `json:"usage"`
	// Cost is the run's cost, as its view shows it: Runtime.Cost of the
	// task's usage by model (compactions included), which an attempt
	// records when it ends; for a run with none recorded yet (in its first
	// attempt, or stored by an older version), the cost of its model steps
	// so far. nil when no model has a price (Options.Prices).
	// UnpricedModels names the models that were not priced, so a partial
	// cost is never mistaken for the whole.
	Cost           *float64 `json:"cost,omitempty"`
	UnpricedModels []string `json:"unpriced_models,omitempty"`
}

// Price is what a model's tokens cost, per million, in the operator's
// unit.
type Price struct {
	InputPerMillion  float64
	OutputPerMillion float64
}

// cost prices a model call.
func (p Price) cost(in, out int64) float64 {
	return (float64(in)*p.InputPerMillion + float64(out)*p.OutputPerMillion) / 1e6
}

// TrajectoryStep is one model call or tool call.
type TrajectoryStep struct {
	// Type is "model" or "tool".
	Type    string `json:"type"`
	Actor   string `json:"actor"`
	Attempt int    `json:"attempt"`
	// Iteration is the loop iteration the step belongs to.
	Iteration int `json:"iteration,omitempty"`
	// Model, InputTokens, OutputTokens, FinishReason and ToolCalls describe
	// a model call.
	Model        string `json:"model,omitempty"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	ToolCalls    int    `json:"tool_calls,omitempty"`
	// Cost is the model call's cost, when its model has a price.
	Cost *float64 `json:"cost,omitempty"`
	// Tool, CallID, Arguments and Result describe a tool call.
	Tool      string          `json:"tool,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    string          `json:"result,omitempty"`
	// Governance lists the call's governance events' payloads: policy
	// verdicts and approval decisions, in order.
	Governance []json.RawMessage `json:"governance,omitempty"`
	// Effects lists the call's effect ledger events (intent, result,
	// doubt, resolution) as the log holds them (effects_trajectory.go).
	Effects []json.RawMessage `json:"effects,omitempty"`
	// Error is why the step failed ("" when it did not).
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS float64   `json:"duration_ms"`
}

// stepEvent is the part of a step event's body a trajectory reads.
type stepEvent struct {
	Actor   string `json:"actor"`
	Payload struct {
		Kind   string `json:"kind"`
		Error  string `json:"error"`
		Detail struct {
			Iteration    int    `json:"iteration"`
			ToolCalls    int    `json:"tool_calls"`
			FinishReason string `json:"finish_reason"`
			Model        string `json:"model"`
			InputTokens  int64  `json:"input_tokens"`
			OutputTokens int64  `json:"output_tokens"`
			Tool         string `json:"tool"`
			CallID       string `json:"call_id"`
		} `json:"detail"`
	} `json:"payload"`
}

// Trajectory reads run runID's trajectory from its stored log.
func (r *Runtime) Trajectory(ctx context.Context, runID string) (Trajectory, error) {
	t, err := r.st.GetTask(ctx, runID)
	if err != nil {
		return Trajectory{}, err
	}
	b := trajectoryBuilder{open: map[stepKey]int{}, calls: map[string]model.ToolCall{}}
	for after := int64(0); ; {
		page, err := r.st.ReadEvents(ctx, runID, after, 1000)
		if err != nil {
			return Trajectory{}, err
		}
		if len(page.Events) == 0 {
			break
		}
		for _, ev := range page.Events {
			b.add(ev)
		}
		after = page.Events[len(page.Events)-1].Seq
	}
	tr := Trajectory{RunID: runID, Steps: b.steps, Usage: t.Usage}
	r.price(&tr)
	if len(t.ModelUsage) > 0 {
		tr.Cost, tr.UnpricedModels = r.Cost(t.ModelUsage)
	}
	return tr, nil
}

// price sets the cost of each model step whose model has a price, and
// their total.
func (r *Runtime) price(tr *Trajectory) {
	if len(r.prices) == 0 {
		return
	}
	var total float64
	priced := false
	for i := range tr.Steps {
		s := &tr.Steps[i]
		if s.Type != "model" || s.InputTokens+s.OutputTokens == 0 {
			continue
		}
		p, ok := r.prices[s.Model]
		if !ok {
			if !slices.Contains(tr.UnpricedModels, s.Model) {
				tr.UnpricedModels = append(tr.UnpricedModels, s.Model)
			}
			continue
		}
		c := p.cost(s.InputTokens, s.OutputTokens)
		s.Cost = &c
		total += c
		priced = true
	}
	if priced {
		tr.Cost = &total
	}
}

// stepKey pairs a step's start with its end.
type stepKey struct {
	actor, kind, callID string
	iteration           int
}

type trajectoryBuilder struct {
	attempt int
	steps   []TrajectoryStep
	open    map[stepKey]int           // step started, index in steps
	calls   map[string]model.ToolCall // tool calls by id, from deltas
	// verdicts are the governance events' payloads by call id.
	verdicts map[string][]json.RawMessage
	// effects are effect events not yet on a step, by call id.
	effects map[string][]json.RawMessage
}

func (b *trajectoryBuilder) add(ev run.Event) {
	switch ev.Type {
	case EventRunStart:
		var d RunStartData
		if json.Unmarshal(ev.Data, &d) == nil {
			b.attempt = d.Attempt
		}
		clear(b.open) // a step an attempt cut short ends with it
	case EventDelta:
		b.delta(ev)
	case EventGovernance:
		b.verdict(ev)
	case EventEffectIntent, EventEffectResult, EventEffectDoubt, EventEffectResolved:
		b.effect(ev)
	case EventStepStart, EventStepComplete, EventStepError:
		b.step(ev)
	}
}

func (b *trajectoryBuilder) delta(ev run.Event) {
	var d DeltaData
	if json.Unmarshal(ev.Data, &d) != nil {
		return
	}
	if c := d.ToolCall; c != nil {
		b.calls[c.ID] = *c
	}
	if res := d.ToolResult; res != nil {
		for i := len(b.steps) - 1; i >= 0; i-- {
			if s := &b.steps[i]; s.Type == "tool" && s.CallID == res.ToolCallID {
				s.Result = res.Content
				if res.IsError && s.Error == "" {
					s.Error = res.Content
				}
				break
			}
		}
	}
}

func (b *trajectoryBuilder) step(ev run.Event) {
	var d stepEvent
	if json.Unmarshal(ev.Data, &d) != nil || d.Payload.Kind != "model" && d.Payload.Kind != "tool" {
		return
	}
	det := d.Payload.Detail
	key := stepKey{actor: d.Actor, kind: d.Payload.Kind, callID: det.CallID, iteration: det.Iteration}
	if ev.Type == EventStepStart {
		b.open[key] = len(b.steps)
		b.steps = append(b.steps, TrajectoryStep{
			Type: d.Payload.Kind, Actor: d.Actor, Attempt: b.attempt, Iteration: det.Iteration,
			Tool: det.Tool, CallID: det.CallID, StartedAt: ev.Time,
		})
		if c, ok := b.calls[det.CallID]; ok && det.CallID != "" {
			b.steps[len(b.steps)-1].Arguments = c.Arguments
		}
		if det.CallID != "" {
			b.steps[len(b.steps)-1].Governance = b.verdicts[det.CallID]
			b.steps[len(b.steps)-1].Effects = b.effects[det.CallID]
			delete(b.effects, det.CallID)
		}
		return
	}
	i, ok := b.open[key]
	if !ok {
		return
	}
	delete(b.open, key)
	s := &b.steps[i]
	s.DurationMS = float64(ev.Time.Sub(s.StartedAt).Microseconds()) / 1000
	s.Model, s.InputTokens, s.OutputTokens = det.Model, det.InputTokens, det.OutputTokens
	s.FinishReason, s.ToolCalls = det.FinishReason, det.ToolCalls
	if ev.Type == EventStepError {
		s.Error = d.Payload.Error
	}
}
