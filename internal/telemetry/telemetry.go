package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"agentd/internal/runtime"
	"agentd/internal/store"
)

// Options configure New.
type Options struct {
	// Getenv reads the OTEL_* variables (default: none set).
	Getenv func(string) string
	// Metrics turns the Prometheus metrics on.
	Metrics bool
	// TracerProvider, when set, is used instead of one built from the
	// environment (tests use the SDK's in-memory exporter through it).
	TracerProvider trace.TracerProvider
}

// Telemetry is a process's traces and metrics; either may be off. The zero
// value has both off.
type Telemetry struct {
	// tracer is nil when traces are off.
	tracer trace.Tracer
	tp     trace.TracerProvider
	// sdk is the provider New built, shut down by Shutdown.
	sdk *sdktrace.TracerProvider
	// Metrics is nil when metrics are off.
	Metrics *Metrics
}

// propagator carries W3C trace context and baggage in and out.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// New sets up what opts and the environment ask for. With traces on it
// also installs the tracer provider and the W3C propagator as OpenTelemetry's
// globals, which instrumented clients (the federation peers' transport)
// use.
func New(ctx context.Context, opts Options) (*Telemetry, error) {
	t := &Telemetry{tp: opts.TracerProvider}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if t.tp == nil && tracingWanted(getenv) {
		sdk, err := newTracerProvider(ctx, getenv)
		if err != nil {
			return nil, err
		}
		t.sdk, t.tp = sdk, sdk
	}
	if t.tp != nil {
		t.tracer = t.tp.Tracer("agentd")
		otel.SetTracerProvider(t.tp)
		otel.SetTextMapPropagator(propagator)
	}
	if opts.Metrics {
		t.Metrics = NewMetrics()
	}
	return t, nil
}

// Tracing reports whether traces are on.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// Observer is the runtime's observer for what is on (nil when nothing is).
func (t *Telemetry) Observer() runtime.Observer {
	if !t.Tracing() && t.Metrics == nil {
		return nil
	}
	return &observer{tracer: t.tracer, m: t.Metrics}
}

// Store returns st reporting its errors, flushes and lease renewals to the
// metrics, or st itself when metrics are off.
func (t *Telemetry) Store(st store.Store) store.Store {
	if t == nil || t.Metrics == nil {
		return st
	}
	return &instrumentedStore{Store: st, m: t.Metrics}
}

// LogHandler returns h adding the trace_id and span_id of the record's
// context, or h itself when traces are off.
func (t *Telemetry) LogHandler(h slog.Handler) slog.Handler {
	if !t.Tracing() {
		return h
	}
	return traceHandler{h}
}
