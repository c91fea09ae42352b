package telemetry_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"agentd/internal/telemetry"
)

// TestLogRecordsCarryTraceIDs: a record logged with a traced context
// carries its trace_id and span_id; one without stays as it was.
func TestLogRecordsCarryTraceIDs(t *testing.T) {
	tel, _ := traced(t)
	var buf bytes.Buffer
	log := slog.New(tel.LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	ctx, span := tracerOf(t).Start(t.Context(), "work")
	log.InfoContext(ctx, "inside")
	span.End()
	log.Info("outside")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var in, out map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &out); err != nil {
		t.Fatal(err)
	}
	if in["trace_id"] != span.SpanContext().TraceID().String() || in["span_id"] != span.SpanContext().SpanID().String() || in["component"] != "test" {
		t.Errorf("traced record %v, want trace_id %s and span_id %s", in, span.SpanContext().TraceID(), span.SpanContext().SpanID())
	}
	if _, ok := out["trace_id"]; ok {
		t.Errorf("untraced record has a trace_id: %v", out)
	}
}

// TestReportHooks: what the push deliverer and retention report shows in
// the scrape; a nil *Metrics (metrics off) takes reports and ignores them.
func TestReportHooks(t *testing.T) {
	m := telemetry.NewMetrics()
	m.WebhookDelivery("delivered")
	m.WebhookDelivery("delivered")
	m.WebhookDelivery("dropped")
	m.WebhookRetry()
	m.Pruned(2, 10, 1)
	var off *telemetry.Metrics
	off.WebhookDelivery("delivered")
	off.WebhookRetry()
	off.Pruned(1, 1, 1)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`agentd_webhook_deliveries_total{outcome="delivered"} 2`,
		`agentd_webhook_deliveries_total{outcome="dropped"} 1`,
		`agentd_webhook_retries_total 1`,
		`agentd_retention_pruned_total{kind="runs"} 2`,
		`agentd_retention_pruned_total{kind="events"} 10`,
		`agentd_retention_pruned_total{kind="checkpoints"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
}
