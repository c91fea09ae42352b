package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// MetaTraceParent is the task metadata key holding the W3C traceparent of
// the run's span: every attempt of the run is its child.
const MetaTraceParent = "traceparent"

// observer is the runtime.Observer of traces (tracer, nil when off) and
// metrics (m, nil when off).
type observer struct {
	tracer trace.Tracer
	m      *Metrics
}

// RunCreated starts and ends the run's span, a child of the request's,
// and returns its trace context for the task's metadata. The span marks the
// run's creation; its attempts, which may execute much later and on other
// replicas, are its children.
func (o *observer) RunCreated(ctx context.Context, run runtime.RunInfo) map[string]any {
	if o.tracer == nil {
		return nil
	}
	ctx, span := o.tracer.Start(ctx, "run "+run.AgentID, trace.WithAttributes(
		attribute.String("agentd.run.id", run.RunID),
		attribute.String("gen_ai.agent.name", run.AgentID),
		attribute.String("gen_ai.conversation.id", run.ContextID),
	))
	span.End()
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	if carrier["traceparent"] == "" {
		return nil
	}
	out := map[string]any{MetaTraceParent: carrier["traceparent"]}
	return out
}

// AttemptStarted opens the attempt's span under the run's stored trace
// context and counts the attempt.
func (o *observer) AttemptStarted(ctx context.Context, a runtime.AttemptInfo) (context.Context, runtime.AttemptObserver) {
	resume := a.Resume
	if resume == "" {
		resume = "new"
	}
	if o.m != nil {
		o.m.runsStarted.WithLabelValues(a.AgentID, resume).Inc()
		if a.Resume == "crash" {
			o.m.takeovers.Inc()
		}
	}
	at := &attempt{o: o, info: a, start: time.Now()}
	if o.tracer != nil {
		if tp, _ := a.Metadata[MetaTraceParent].(string); tp != "" {
			ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
		}
		ctx, at.span = o.tracer.Start(ctx, "invoke_agent "+a.AgentID, trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", a.AgentID),
			attribute.String("gen_ai.conversation.id", a.ContextID),
			attribute.String("agentd.run.id", a.RunID),
			attribute.Int("agentd.attempt", a.Attempt),
			attribute.String("agentd.resume", resume),
		))
		at.ctx = ctx
		at.steps = map[stepKey]trace.Span{}
	}
	return ctx, at
}

// attempt observes one attempt: its span (nil when traces are off) and
// its open step spans.
type attempt struct {
	o     *observer
	info  runtime.AttemptInfo
	start time.Time
	span  trace.Span
	ctx   context.Context // the attempt span's, parent of the steps

	mu    sync.Mutex
	steps map[stepKey]trace.Span
}

// Step counts model tokens and tool calls, and opens and closes the step's
// span.
func (a *attempt) Step(typ, actor string, payload []byte) {
	s, ok := decodeStep(payload)
	if !ok {
		return
	}
	if typ != runtime.EventStepStart {
		a.o.m.step(s, typ == runtime.EventStepError)
	}
	if a.span != nil {
		a.traceStep(typ, actor, s)
	}
}

// Streamed records the time to first token.
func (a *attempt) Streamed() {
	d := time.Since(a.start)
	if m := a.o.m; m != nil {
		m.firstToken.WithLabelValues(a.info.AgentID).Observe(d.Seconds())
	}
	if a.span != nil {
		a.span.AddEvent("first_token")
	}
}

// Ended closes the attempt's span (and any step it cut short) and counts
// the outcome.
func (a *attempt) Ended(out runtime.AttemptOutcome) {
	state := string(out.State)
	if out.Handover {
		state = "handover"
	}
	if m := a.o.m; m != nil {
		m.runsEnded.WithLabelValues(a.info.AgentID, state).Inc()
		if out.State.Terminal() && !out.Handover && !a.info.Created.IsZero() {
			m.runDuration.WithLabelValues(a.info.AgentID, state).Observe(time.Since(a.info.Created).Seconds())
		}
	}
	if a.span == nil {
		return
	}
	a.mu.Lock()
	for k, s := range a.steps {
		s.SetStatus(codes.Error, "the attempt ended during the step")
		s.End()
		delete(a.steps, k)
	}
	a.mu.Unlock()
	a.span.SetAttributes(
		attribute.String("agentd.state", state),
		attribute.Int64("gen_ai.usage.input_tokens", out.Usage.InputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", out.Usage.OutputTokens),
	)
	if out.Error != nil && out.State != run.StateCanceled {
		a.span.SetAttributes(attribute.String("error.type", out.Error.Class))
		a.span.SetStatus(codes.Error, out.Error.Message)
	}
	a.span.End()
}
