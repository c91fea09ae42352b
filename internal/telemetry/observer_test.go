package telemetry_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"agentd/internal/config"
	"agentd/internal/model"
	"agentd/internal/runtime"
	"agentd/internal/store/memstore"
	"agentd/internal/telemetry"
)

// agentsYAML: a tool loop on a scripted model called demo-model, whose
// clock call succeeds and whose calculator call fails.
const agentsYAML = `
providers:
  script:
    type: scripted
    rules:
      - name: tell the time
        after_tool: clock
        reply: 'It is {{.ToolResult}}.'
      - name: ask the clock
        match: '(?i)time'
        tool_calls:
          - name: clock
            arguments: {}
      - name: fail
        match: '(?s).*'
        tool_calls:
          - name: calculator
            arguments: '{"expression": "1/"}'
agents:
  - id: assistant
    engine: loop
    provider: script
    model: demo-model
    tools: [clock, calculator]
    max_iterations: 2
`

// newRuntime builds the agents of agentsYAML on memstore, observed by tel.
func newRuntime(t *testing.T, tel *telemetry.Telemetry) *runtime.Runtime {
	t.Helper()
	cfg, err := config.Parse([]byte(agentsYAML), "test")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := cfg.Build(config.BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Options{Store: tel.Store(memstore.New()), Agents: agents, Observer: tel.Observer()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return rt
}

// tracerOf is a tracer of the provider traced installed as the global.
func tracerOf(t *testing.T) trace.Tracer {
	t.Helper()
	return otel.GetTracerProvider().Tracer("test")
}

// traced sets up telemetry exporting to an in-memory exporter.
func traced(t *testing.T) (*telemetry.Telemetry, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := telemetry.New(t.Context(), telemetry.Options{TracerProvider: tp, Metrics: true})
	if err != nil {
		t.Fatal(err)
	}
	return tel, exp
}

// send runs text on the assistant under a request span and waits for it.
func send(t *testing.T, rt *runtime.Runtime, exp *tracetest.InMemoryExporter, text string) (string, tracetest.SpanStub) {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, req := tp.Tracer("test").Start(t.Context(), "request")
	sub, err := rt.Send(ctx, runtime.SendRequest{AgentID: "assistant", Message: textMessage(text)})
	req.End()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Wait(t.Context(), sub.Task.ID); err != nil {
		t.Fatal(err)
	}
	return sub.Task.ID, find(t, exp.GetSpans(), "request", "0000000000000000")
}

// TestRunSpanTree: a run's spans hang under the request that created it:
// request → run → invoke_agent (the attempt) → chat and execute_tool, with
// the GenAI attributes; a failed tool call and a failed run are errors.
func TestRunSpanTree(t *testing.T) {
	tel, exp := traced(t)
	rt := newRuntime(t, tel)

	id, req := send(t, rt, exp, "what time is it?")
	spans := exp.GetSpans()
	run := find(t, spans, "run assistant", req.SpanContext.SpanID().String())
	att := find(t, spans, "invoke_agent assistant", run.SpanContext.SpanID().String())
	wantAttr(t, att, "agentd.run.id", id)
	wantAttr(t, att, "agentd.attempt", "1")
	wantAttr(t, att, "agentd.state", "completed")
	chat := find(t, spans, "chat demo-model", att.SpanContext.SpanID().String())
	wantAttr(t, chat, "gen_ai.operation.name", "chat")
	wantAttr(t, chat, "gen_ai.request.model", "demo-model")
	tool := find(t, spans, "execute_tool clock", att.SpanContext.SpanID().String())
	wantAttr(t, tool, "gen_ai.tool.name", "clock")
	if tool.Status.Code == codes.Error {
		t.Errorf("the clock's span is an error: %+v", tool.Status)
	}

	exp.Reset()
	_, req = send(t, rt, exp, "divide")
	spans = exp.GetSpans()
	run = find(t, spans, "run assistant", req.SpanContext.SpanID().String())
	att = find(t, spans, "invoke_agent assistant", run.SpanContext.SpanID().String())
	tool = find(t, spans, "execute_tool calculator", att.SpanContext.SpanID().String())
	if tool.Status.Code != codes.Error {
		t.Errorf("the failed calculator call's span is not an error: %+v", tool.Status)
	}
	if att.Status.Code != codes.Error {
		t.Errorf("the failed run's attempt span is not an error: %+v", att.Status)
	}
}

// TestAttemptJoinsStoredTrace: an attempt that starts elsewhere (a resume
// on another replica) finds the run's trace in the task's metadata and is
// a child of the run span.
func TestAttemptJoinsStoredTrace(t *testing.T) {
	tel, exp := traced(t)
	obs := tel.Observer()
	meta := obs.RunCreated(t.Context(), runtime.RunInfo{RunID: "r-1", ContextID: "c-1", AgentID: "a"})
	if meta[telemetry.MetaTraceParent] == nil {
		t.Fatalf("no traceparent stored: %v", meta)
	}
	// Another process: a fresh context, the stored metadata only.
	_, at := obs.AttemptStarted(context.Background(), runtime.AttemptInfo{
		RunInfo: runtime.RunInfo{RunID: "r-1", ContextID: "c-1", AgentID: "a"}, Attempt: 2, Resume: "crash", Metadata: meta,
	})
	at.Ended(runtime.AttemptOutcome{State: "completed"})
	spans := exp.GetSpans()
	run := find(t, spans, "run a", "0000000000000000")
	att := find(t, spans, "invoke_agent a", run.SpanContext.SpanID().String())
	if att.SpanContext.TraceID() != run.SpanContext.TraceID() {
		t.Fatal("the resumed attempt is in another trace")
	}
	wantAttr(t, att, "agentd.resume", "crash")
}

// TestOffIsNothing: with no endpoint and no metrics, telemetry installs
// nothing: the handler is the router itself, the runtime has no observer,
// the store and the log handler are the ones given.
func TestOffIsNothing(t *testing.T) {
	tel, err := telemetry.New(t.Context(), telemetry.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Tracing() || tel.Metrics != nil || tel.Observer() != nil {
		t.Fatalf("telemetry on without being asked: tracing %v, metrics %v", tel.Tracing(), tel.Metrics != nil)
	}
	st := memstore.New()
	if tel.Store(st) != st {
		t.Error("the store is wrapped")
	}
	router := http.NewServeMux()
	if tel.Handler(router) != http.Handler(router) {
		t.Error("the router is wrapped")
	}
	lh := slog.NewTextHandler(io.Discard, nil)
	if tel.LogHandler(lh) != slog.Handler(lh) {
		t.Error("the log handler is wrapped")
	}
}

func textMessage(s string) model.Message { return model.NewText(model.RoleUser, s) }

func find(t *testing.T, spans tracetest.SpanStubs, name, parent string) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == name && s.Parent.SpanID().String() == parent {
			return s
		}
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name+" ← "+s.Parent.SpanID().String())
	}
	t.Fatalf("no span %q under %s among %q", name, parent, names)
	return tracetest.SpanStub{}
}

func wantAttr(t *testing.T, s tracetest.SpanStub, key, want string) {
	t.Helper()
	for _, kv := range s.Attributes {
		if kv.Key == attribute.Key(key) {
			if got := kv.Value.String(); got != want {
				t.Errorf("span %s: %s = %q, want %q", s.Name, key, got, want)
			}
			return
		}
	}
	t.Errorf("span %s has no %s", s.Name, key)
}
