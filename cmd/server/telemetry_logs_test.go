package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"agentd/internal/telemetry/otlptest"
)

// TestLogsCarryTheTrace: with tracing on, the log record of a run's
// failure carries the trace_id and span_id of the run's attempt — the
// trace the exported spans belong to — so that an operator goes from a
// log line to its trace.
func TestLogsCarryTheTrace(t *testing.T) {
	rcv := otlptest.New(true)
	defer rcv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL(), "MODEL_KEY": "k"}
	s := startWithEnv(t, env, "--log-format", "json", "--config", writeYAML(t, `
providers:
  gone:
    type: openai
    base_url: http://127.0.0.1:1/v1
    api_key_env: MODEL_KEY
    model: m
    max_retries: 0
agents:
  - id: broken
    engine: loop
    provider: gone
`))
	v := readJSON[runJSON](t, s.post(t, "/v1/agents/broken/messages", `{"text": "hello"}`), http.StatusOK)
	if v.Status != "failed" {
		t.Fatalf("run %+v, want failed (its model endpoint is unreachable)", v)
	}
	s.stop()
	if err := s.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	var rec map[string]any
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, "a service it needs is unavailable") && strings.Contains(line, v.ID) {
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
		}
	}
	if rec == nil {
		t.Fatalf("no log record of the run's failure:\n%s", s.logs)
	}
	spans, _ := rcv.Spans()
	var attempt otlptest.Span
	for _, sp := range spans {
		if sp.Name == "invoke_agent broken" && sp.Attrs["agentd.run.id"] == v.ID {
			attempt = sp
		}
	}
	if attempt.TraceID == "" {
		t.Fatalf("no attempt span of run %s among %d spans", v.ID, len(spans))
	}
	if rec["trace_id"] != attempt.TraceID || rec["span_id"] != attempt.SpanID {
		t.Fatalf("log record %v, want trace_id %s and span_id %s (the attempt's span)", rec, attempt.TraceID, attempt.SpanID)
	}
}
