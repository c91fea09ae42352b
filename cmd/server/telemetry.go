package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/config"
	"agentd/internal/retention"
	"agentd/internal/store"
	"agentd/internal/telemetry"
)

// startTelemetry sets up traces (when the OTEL_* environment asks for
// them) and metrics (when the configuration serves them), and returns the
// logger with trace ids added to its records.
func startTelemetry(ctx context.Context, cfg *config.Config, getenv func(string) string, log *slog.Logger) (*telemetry.Telemetry, *slog.Logger, error) {
	if addr := cfg.Server.MetricsAddr; addr != "" {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, nil, fmt.Errorf("%w: server.metrics_addr %q: %v", errUsage, addr, err)
		}
	}
	tel, err := telemetry.New(ctx, telemetry.Options{
		Getenv:  getenv,
		Metrics: cfg.Server.MetricsAddr != "" || cfg.Server.MetricsOnMain,
	})
	if err != nil {
		return nil, nil, err
	}
	if tel.Tracing() {
		log = slog.New(tel.LogHandler(log.Handler()))
		log.Info("tracing on: exporting spans over OTLP/HTTP")
	}
	return tel, log, nil
}

// stopTelemetry exports the spans still buffered.
func stopTelemetry(tel *telemetry.Telemetry, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		log.Warn("trace export at shutdown", "err", err)
	}
}

// exposeMetrics serves GET /metrics on router when server.metrics_on_main
// says so (behind the main listener's authentication), and on a listener
// of its own at server.metrics_addr. It returns a function that stops
// that listener.
func exposeMetrics(router chi.Router, cfg *config.Config, tel *telemetry.Telemetry, log *slog.Logger) (stop func(), err error) {
	if tel.Metrics == nil {
		return func() {}, nil
	}
	h := tel.Metrics.Handler()
	if cfg.Server.MetricsOnMain {
		router.Method(http.MethodGet, "/metrics", h)
	}
	addr := cfg.Server.MetricsAddr
	if addr == "" {
		return func() {}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on server.metrics_addr %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics listener", "err", err)
		}
	}()
	log.Info("metrics", "addr", ln.Addr().String(), "path", "/metrics")
	return func() { _ = srv.Close() }, nil
}

// startRetention prunes finished runs as the configuration's retention
// section says, until the returned function is called.
func startRetention(st store.Store, cfg *config.Config, tel *telemetry.Telemetry, log *slog.Logger) (stop func(), err error) {
	r := cfg.Retention
	if r == nil {
		return func() {}, nil
	}
	p, ok := st.(store.Pruner)
	if !ok {
		return nil, fmt.Errorf("retention: the store cannot prune finished runs")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	pr := retention.New(retention.Options{
		Store: p, MaxAge: time.Duration(r.MaxAge), Interval: r.IntervalOr(), Batch: r.BatchOr(),
		Report: func(got store.Pruned) { tel.Metrics.Pruned(got.Runs, got.Events, got.Checkpoints) },
		Logger: log,
	})
	go func() {
		defer close(done)
		pr.Run(ctx)
	}()
	log.Info("retention", "max_age", time.Duration(r.MaxAge), "interval", r.IntervalOr(), "batch", r.BatchOr())
	return func() { cancel(); <-done }, nil
}
