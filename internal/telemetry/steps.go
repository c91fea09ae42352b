package telemetry

import (
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"agentd/internal/runtime"
)

// stepPayload is what a step event's payload says (engine.ActorEvents):
// the loop engine's model and tool steps carry the details GenAI spans and
// token metrics need; other engines' steps (workflow steps, flow nodes)
// carry a kind of their own.
type stepPayload struct {
	Kind   string `json:"kind"`
	Error  string `json:"error"`
	Detail struct {
		Iteration    int    `json:"iteration"`
		FinishReason string `json:"finish_reason"`
		Model        string `json:"model"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
		Tool         string `json:"tool"`
		CallID       string `json:"call_id"`
	} `json:"detail"`
}

// stepKey pairs a step's start with its end.
type stepKey struct {
	actor, kind, callID string
	iteration           int
}

func decodeStep(payload []byte) (stepPayload, bool) {
	var s stepPayload
	if json.Unmarshal(payload, &s) != nil {
		return s, false
	}
	return s, true
}

// step counts an ended step: the tokens of a model call, a tool call and
// whether it failed.
func (m *Metrics) step(s stepPayload, failed bool) {
	if m == nil {
		return
	}
	d := s.Detail
	switch s.Kind {
	case "model":
		model := d.Model
		if model == "" {
			model = "unknown"
		}
		m.tokens.WithLabelValues(model, "input").Add(float64(d.InputTokens))
		m.tokens.WithLabelValues(model, "output").Add(float64(d.OutputTokens))
	case "tool":
		m.toolCalls.WithLabelValues(d.Tool).Inc()
		if failed {
			m.toolErrors.WithLabelValues(d.Tool).Inc()
		}
	}
}

// traceStep opens a span at a step's start and closes it at its end, with
// the GenAI semantic conventions' names and attributes for model calls
// ("chat <model>") and tool calls ("execute_tool <tool>").
func (a *attempt) traceStep(typ, actor string, s stepPayload) {
	d := s.Detail
	key := stepKey{actor: actor, kind: s.Kind, callID: d.CallID, iteration: d.Iteration}
	a.mu.Lock()
	defer a.mu.Unlock()
	if typ == runtime.EventStepStart {
		name, attrs := stepStart(actor, s)
		_, span := a.o.tracer.Start(a.ctx, name, trace.WithAttributes(attrs...))
		if old := a.steps[key]; old != nil {
			old.End() // a step started twice without an end
		}
		a.steps[key] = span
		return
	}
	span := a.steps[key]
	if span == nil {
		return
	}
	delete(a.steps, key)
	if s.Kind == "model" {
		if d.Model != "" {
			span.SetName("chat " + d.Model)
			span.SetAttributes(attribute.String("gen_ai.request.model", d.Model), attribute.String("gen_ai.response.model", d.Model))
		}
		span.SetAttributes(
			attribute.Int64("gen_ai.usage.input_tokens", d.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", d.OutputTokens),
		)
		if d.FinishReason != "" {
			span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{d.FinishReason}))
		}
	}
	if typ == runtime.EventStepError {
		span.SetAttributes(attribute.String("error.type", "step_error"))
		span.SetStatus(codes.Error, s.Error)
	}
	span.End()
}

// stepStart names a step's span and gives its first attributes.
func stepStart(actor string, s stepPayload) (string, []attribute.KeyValue) {
	d := s.Detail
	switch s.Kind {
	case "model":
		return "chat", []attribute.KeyValue{
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.agent.name", actor),
			attribute.Int("agentd.iteration", d.Iteration),
		}
	case "tool":
		return "execute_tool " + d.Tool, []attribute.KeyValue{
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", d.Tool),
			attribute.String("gen_ai.tool.call.id", d.CallID),
			attribute.Int("agentd.iteration", d.Iteration),
		}
	}
	return "step " + actor, []attribute.KeyValue{
		attribute.String("agentd.step.actor", actor),
		attribute.String("agentd.step.kind", s.Kind),
	}
}
