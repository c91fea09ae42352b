package a2a_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// TestPushCarriesTraceContext: with tracing on, every webhook request is
// a client span and carries its W3C traceparent: in the run's trace, a
// child of the run's span, when the task stores one (telemetry keeps it
// in the task's metadata), else in a trace of its own.
func TestPushCarriesTraceContext(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		_ = tp.Shutdown(context.Background())
	})
	e, rcv := newPushEnv(t)

	const runTrace, runSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	traced, untraced := model.NewID(), model.NewID()
	seedFinishedTask(t, e.st, ctxT(t), traced)
	task, err := e.st.GetTask(ctxT(t), traced)
	if err != nil {
		t.Fatal(err)
	}
	task.Metadata = map[string]any{"traceparent": "00-" + runTrace + "-" + runSpan + "-01"}
	if err := e.st.Apply(ctxT(t), store.Change{TaskID: traced, UpdateTask: &task}); err != nil {
		t.Fatal(err)
	}
	seedFinishedTask(t, e.st, ctxT(t), untraced)
	for id, path := range map[string]string{traced: "/traced", untraced: "/untraced"} {
		if err := e.st.PutPushConfig(ctxT(t), run.PushConfig{TaskID: id, ID: "h", Config: []byte(`{"url": "` + rcv.URL(path) + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	got := waitTerminal(t, rcv, "/traced", a2a.TaskID(traced))
	for _, n := range got {
		sc := spanContextOf(t, n.Header.Get("traceparent"))
		if sc.TraceID().String() != runTrace {
			t.Errorf("webhook request traceparent %q: want the run's trace %s", n.Header.Get("traceparent"), runTrace)
		}
		s := exported(t, spans, sc.SpanID())
		if s.Parent.SpanID().String() != runSpan || s.SpanKind != trace.SpanKindClient {
			t.Errorf("webhook span %q (kind %v): parent %s, want a client span under the run's span %s", s.Name, s.SpanKind, s.Parent.SpanID(), runSpan)
		}
	}
	other := waitTerminal(t, rcv, "/untraced", a2a.TaskID(untraced))
	for _, n := range other {
		sc := spanContextOf(t, n.Header.Get("traceparent"))
		if s := exported(t, spans, sc.SpanID()); sc.TraceID().String() == runTrace || s.Parent.IsValid() {
			t.Errorf("webhook of a task without a trace: trace %s, parent %v; want a root span of its own", sc.TraceID(), s.Parent)
		}
	}
}

func spanContextOf(t *testing.T, traceparent string) trace.SpanContext {
	t.Helper()
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		t.Fatalf("webhook request traceparent %q: not a valid trace context", traceparent)
	}
	return sc
}

// exported waits until the span id was exported and returns it.
func exported(t *testing.T, spans *tracetest.InMemoryExporter, id trace.SpanID) tracetest.SpanStub {
	t.Helper()
	ctx := ctxT(t)
	for {
		for _, s := range spans.GetSpans() {
			if s.SpanContext.SpanID() == id {
				return s
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("span %s was never exported", id)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
