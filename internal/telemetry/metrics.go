package telemetry

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are agentd's Prometheus metrics, in a registry of their own (with
// the Go runtime's and the process's). A nil *Metrics is valid and records
// nothing, so code may report to it unconditionally.
type Metrics struct {
	reg *prometheus.Registry

	requests     *prometheus.CounterVec
	requestTime  *prometheus.HistogramVec
	streamsOpen  prometheus.Gauge
	runsStarted  *prometheus.CounterVec
	runsEnded    *prometheus.CounterVec
	runDuration  *prometheus.HistogramVec
	firstToken   *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	toolCalls    *prometheus.CounterVec
	toolErrors   *prometheus.CounterVec
	flushEvents  prometheus.Histogram
	flushTime    prometheus.Histogram
	leaseRenews  *prometheus.CounterVec
	takeovers    prometheus.Counter
	webhooks     *prometheus.CounterVec
	webhookRetry prometheus.Counter
	storeErrors  *prometheus.CounterVec
	pruned       *prometheus.CounterVec
	doubts       *prometheus.CounterVec // effects.go
}

// latencyBuckets suit request, flush and first-token latencies: 1 ms to
// 10 s.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics registers agentd's metrics in a new registry.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	f := factory{reg}
	m := &Metrics{
		reg:          reg,
		requests:     f.counter("agentd_http_requests_total", "HTTP requests by route pattern, method and status code.", "route", "method", "code"),
		requestTime:  f.histogram("agentd_http_request_duration_seconds", "Time to answer an HTTP request (streams: until they close).", latencyBuckets, "route", "method"),
		streamsOpen:  f.gauge("agentd_http_streams_open", "Open server-sent-event streams (REST and A2A)."),
		runsStarted:  f.counter("agentd_run_attempts_started_total", "Run attempts started on this replica, by agent and why (new, input, crash, …).", "agent", "resume"),
		runsEnded:    f.counter("agentd_runs_ended_total", "Run attempts ended on this replica, by agent and the state they left the run in (handover: it goes on elsewhere).", "agent", "state"),
		runDuration:  f.histogram("agentd_run_duration_seconds", "Time from a run's creation to its terminal state, by agent and state.", []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 1800}, "agent", "state"),
		firstToken:   f.histogram("agentd_time_to_first_token_seconds", "Time from an attempt's start to its first streamed delta, by agent.", latencyBuckets, "agent"),
		tokens:       f.counter("agentd_gen_ai_tokens_total", "Model tokens by model and type (input or output).", "model", "type"),
		toolCalls:    f.counter("agentd_tool_calls_total", "Tool calls by tool.", "tool"),
		toolErrors:   f.counter("agentd_tool_errors_total", "Tool calls that failed, by tool.", "tool"),
		flushEvents:  f.plainHistogram("agentd_eventlog_flush_events", "Events written per event-log flush.", []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}),
		flushTime:    f.plainHistogram("agentd_eventlog_flush_seconds", "Time of an event-log flush (one store write).", latencyBuckets),
		leaseRenews:  f.counter("agentd_lease_renewals_total", "Lease renewal rounds by outcome (ok, lost: some leases were no longer ours, error).", "outcome"),
		takeovers:    f.plainCounter("agentd_lease_takeovers_total", "Runs this replica took over from a replica whose lease expired."),
		webhooks:     f.counter("agentd_webhook_deliveries_total", "Push-notification deliveries by outcome (delivered, failed, dropped).", "outcome"),
		webhookRetry: f.plainCounter("agentd_webhook_retries_total", "Push-notification deliveries retried."),
		storeErrors:  f.counter("agentd_store_errors_total", "Store operations that failed for another reason than not found, conflict or validation, by operation.", "op"),
		pruned:       f.counter("agentd_retention_pruned_total", "What retention removed: runs whose events and checkpoints were pruned, events, checkpoints.", "kind"),
		doubts:       f.counter("agentd_tool_effect_doubts_total", "Tool calls found in doubt after a cut (intent without result), by how the doubt was resolved (retried, reconciled, absent, skipped, failed; found: not resolved yet).", "resolution"),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// WebhookDelivery counts one push-notification delivery by its outcome:
// "delivered", "failed" (to be retried) or "dropped" (given up).
func (m *Metrics) WebhookDelivery(outcome string) {
	if m != nil {
		m.webhooks.WithLabelValues(outcome).Inc()
	}
}

// WebhookRetry counts a push-notification delivery being retried.
func (m *Metrics) WebhookRetry() {
	if m != nil {
		m.webhookRetry.Inc()
	}
}

// Pruned counts what one retention batch removed.
func (m *Metrics) Pruned(runs, events, checkpoints int64) {
	if m == nil {
		return
	}
	m.pruned.WithLabelValues("runs").Add(float64(runs))
	m.pruned.WithLabelValues("events").Add(float64(events))
	m.pruned.WithLabelValues("checkpoints").Add(float64(checkpoints))
}

// factory makes and registers collectors.
type factory struct{ reg *prometheus.Registry }

func (f factory) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) plainCounter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

func (f factory) plainHistogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}
