package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Handler wraps the server's router next. With traces on, each request
// has a server span (the caller's traceparent is its parent), named by the
// route it matched; with metrics on, requests are counted by route and
// status code and open event streams are gauged. It sets no timeout, so
// streams last as long as they need. With both off it returns next.
func (t *Telemetry) Handler(next http.Handler) http.Handler {
	if t == nil || !t.Tracing() && t.Metrics == nil {
		return next
	}
	var h http.Handler = routed{next: next, m: t.Metrics, tracing: t.Tracing()}
	if t.Tracing() {
		h = otelhttp.NewHandler(h, "http",
			otelhttp.WithTracerProvider(t.tp),
			otelhttp.WithPropagators(propagator),
			// Named by method until routed (see routed).
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))
	}
	return h
}

// routed runs the router with a route context of its own, so that the
// matched route pattern is still known once the router is done with the
// request.
type routed struct {
	next    http.Handler
	m       *Metrics
	tracing bool
}

func (h routed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rctx := chi.NewRouteContext()
	r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx)) // where chi looks for one
	sw := &statusWriter{ResponseWriter: w, m: h.m}
	start := time.Now()
	defer func() {
		if sw.stream {
			h.m.streamClosed()
		}
	}()
	h.next.ServeHTTP(sw, r)
	route := rctx.RoutePattern()
	if route == "" {
		route = "unmatched"
	}
	if h.tracing {
		span := trace.SpanFromContext(r.Context())
		span.SetName(r.Method + " " + route)
		span.SetAttributes(attribute.String("http.route", route))
	}
	h.m.request(route, r.Method, sw.code, time.Since(start))
}

// statusWriter records the status code and notices event streams.
type statusWriter struct {
	http.ResponseWriter
	m      *Metrics
	code   int
	stream bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
		if code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			w.stream = true
			w.m.streamOpened()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps streaming working through the wrapper.
func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines of streams).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (m *Metrics) request(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	if code == 0 {
		code = http.StatusOK
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.requestTime.WithLabelValues(route, method).Observe(d.Seconds())
}

func (m *Metrics) streamOpened() {
	if m != nil {
		m.streamsOpen.Inc()
	}
}

func (m *Metrics) streamClosed() {
	if m != nil {
		m.streamsOpen.Dec()
	}
}
