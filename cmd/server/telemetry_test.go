package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentd/internal/telemetry/otlptest"
)

// startWithEnv is start with the environment env: run reads it instead of
// none.
func startWithEnv(t testing.TB, env map[string]string, args ...string) *server {
	t.Helper()
	return startEnv(t, func(k string) string { return env[k] }, args...)
}

// writeYAML writes a configuration file and returns its path.
func writeYAML(t testing.TB, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTraceAcrossFederationHop: one run of a remote agent on server A,
// whose peer is the assistant (a tool loop) on server B, is one trace, as
// both servers export it over OTLP/HTTP to a receiver in the test: A's
// request span, the run span under it, the attempt span under that, A's
// client span to the peer under the attempt, B's server span under A's
// client span (traceparent crossed the hop), and B's own run, attempt,
// model-call and tool-call spans with their GenAI attributes.
func TestTraceAcrossFederationHop(t *testing.T) {
	rcv := otlptest.New(true)
	defer rcv.Close()
	env := func(service string) map[string]string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL(), "OTEL_SERVICE_NAME": service}
	}
	b := startWithEnv(t, env("agentd-b"), "--config", writeYAML(t, assistantYAML))
	a := startWithEnv(t, env("agentd-a"), "--config", writeYAML(t, fmt.Sprintf(`
federation:
  allow_private: true
providers:
  scout-script:
    type: scripted
    rules:
      - {name: report, after_tool: '*', reply: 'The peer said: {{.ToolResult}}'}
      - name: ask
        match: '(?i)^ask the peer\s+(.+)$'
        tool_calls: [{name: ask_assistant, arguments: '{"message": {{index .Groups 1 | json}}}'}]
agents:
  - id: front
    engine: remote
    peer: %[1]s/agents/assistant/.well-known/agent-card.json
  - id: scout
    engine: loop
    provider: scout-script
    max_iterations: 2
    peer_tools:
      - {name: ask_assistant, card: '%[1]s/agents/assistant/.well-known/agent-card.json'}
`, b.base)))

	v := readJSON[runJSON](t, a.post(t, "/v1/agents/front/messages", `{"text": "what time is it?"}`), http.StatusOK)
	if v.Status != "completed" {
		t.Fatalf("run %+v", v)
	}
	tv := readJSON[runJSON](t, a.post(t, "/v1/agents/scout/messages", `{"text": "ask the peer what time is it?"}`), http.StatusOK)
	if tv.Status != "completed" || !strings.HasPrefix(lastText(tv), "The peer said: It is ") {
		t.Fatalf("peer tool run %s %q", tv.Status, lastText(tv))
	}
	// Shutting the servers down exports what their batchers still hold.
	for _, s := range []*server{a, b} {
		s.stop()
		if err := s.wait(); err != nil {
			t.Fatalf("run: %v", err)
		}
	}
	spans, _ := rcv.Spans()
	tree := newSpanTree(t, spans, v.ID)

	reqA := tree.one("agentd-a", "POST /v1/agents/{agentID}/messages", "")
	runA := tree.one("agentd-a", "run front", reqA.SpanID)
	attA := tree.one("agentd-a", "invoke_agent front", runA.SpanID)
	tree.attrs(attA, map[string]string{"agentd.run.id": v.ID, "agentd.attempt": "1", "gen_ai.operation.name": "invoke_agent"})
	_, reqB := tree.peerRun(attA.SpanID)
	runB := tree.one("agentd-b", "run assistant", reqB.SpanID)
	attB := tree.one("agentd-b", "invoke_agent assistant", runB.SpanID)
	chat := tree.named("agentd-b", "chat demo-model", attB.SpanID)
	if len(chat) < 2 {
		t.Fatalf("%d model-call spans under B's attempt, want 2 (the tool call, then the answer)", len(chat))
	}
	for _, c := range chat {
		tree.attrs(c, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "demo-model"})
		for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons"} {
			if c.Attrs[k] == "" {
				t.Errorf("model-call span %s has no %s: %v", c.Name, k, c.Attrs)
			}
		}
	}
	tool := tree.one("agentd-b", "execute_tool clock", attB.SpanID)
	tree.attrs(tool, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "clock"})

	// A peer tool's call: the A2A request to B carries the scout's
	// attempt's trace context, and B's run of the assistant joins the same
	// trace. (Step spans are made from the run's events, beside the calls
	// they describe: the request hangs from the attempt, next to the
	// execute_tool span.)
	tt := newSpanTree(t, spans, tv.ID)
	reqS := tt.one("agentd-a", "POST /v1/agents/{agentID}/messages", "")
	attS := tt.one("agentd-a", "invoke_agent scout", tt.one("agentd-a", "run scout", reqS.SpanID).SpanID)
	call := tt.one("agentd-a", "execute_tool ask_assistant", attS.SpanID)
	tt.attrs(call, map[string]string{"gen_ai.tool.name": "ask_assistant"})
	_, reqT := tt.peerRun(attS.SpanID)
	runT := tt.one("agentd-b", "run assistant", reqT.SpanID)
	tt.one("agentd-b", "execute_tool clock", tt.one("agentd-b", "invoke_agent assistant", runT.SpanID).SpanID)
}

// assistantYAML configures a tool loop that asks the clock, on a scripted
// model named demo-model.
const assistantYAML = `
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

// spanTree is the spans of one trace.
type spanTree struct {
	t     *testing.T
	spans []otlptest.Span
}

// newSpanTree keeps the spans of the trace whose attempt span names run.
func newSpanTree(t *testing.T, spans []otlptest.Span, run string) spanTree {
	t.Helper()
	trace := ""
	for _, s := range spans {
		if s.Attrs["agentd.run.id"] == run && strings.HasPrefix(s.Name, "invoke_agent") {
			trace = s.TraceID
		}
	}
	if trace == "" {
		t.Fatalf("no attempt span of run %s among %d spans", run, len(spans))
	}
	var out []otlptest.Span
	for _, s := range spans {
		if s.TraceID == trace {
			out = append(out, s)
		}
	}
	return spanTree{t: t, spans: out}
}

func (tr spanTree) dump() string {
	var b strings.Builder
	for _, s := range tr.spans {
		fmt.Fprintf(&b, "\n  %s %q span %s parent %s", s.Service, s.Name, s.SpanID, s.ParentID)
	}
	return b.String()
}

// named returns the spans of service whose name starts with prefix and
// whose parent is parent.
func (tr spanTree) named(service, prefix, parent string) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range tr.spans {
		if s.Service == service && strings.HasPrefix(s.Name, prefix) && s.ParentID == parent {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one span of service called name whose parent is parent.
func (tr spanTree) one(service, name, parent string) otlptest.Span {
	tr.t.Helper()
	var found []otlptest.Span
	for _, s := range tr.named(service, name, parent) {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		tr.t.Fatalf("%d spans %q of %s under %q, want 1; the trace:%s", len(found), name, service, parent, tr.dump())
	}
	return found[0]
}

func (tr spanTree) attrs(s otlptest.Span, want map[string]string) {
	tr.t.Helper()
	for k, v := range want {
		if s.Attrs[k] != v {
			tr.t.Errorf("span %q: %s = %q, want %q (all: %v)", s.Name, k, s.Attrs[k], v, s.Attrs)
		}
	}
}

// metricsYAML is assistantYAML with an agent that streams slowly enough
// for its lease to be renewed, and /metrics on the main listener.
const metricsYAML = assistantYAML + `
  - id: slow
    engine: loop
    provider: paced
server:
  metrics_on_main: true
  lease_ttl: 300ms
`

// TestMetricsScrape runs a tool-calling run, a failing tool call and a
// slow stream, then scrapes GET /metrics over HTTP and checks the series
// each of them must have produced.
func TestMetricsScrape(t *testing.T) {
	cfg := strings.Replace(metricsYAML, "agents:", `  paced:
    type: scripted
    rules:
      - name: paced
        match: '(?s).*'
        count: {number: '20', format: 'tok%d', separator: ' '}
        delay: '30ms'
agents:`, 1)
	s := startWithEnv(t, nil, "--config", writeYAML(t, cfg))

	ok := readJSON[runJSON](t, s.post(t, "/v1/agents/assistant/messages", `{"text": "what time is it?"}`), http.StatusOK)
	failed := readJSON[runJSON](t, s.post(t, "/v1/agents/assistant/messages", `{"text": "divide"}`), http.StatusOK)
	if ok.Status != "completed" || failed.Status == "completed" {
		t.Fatalf("runs %s and %s, want completed and not", ok.Status, failed.Status)
	}
	res := s.post(t, "/v1/agents/slow/messages?stream=true", `{"text": "go"}`)
	during := scrape(t, s)
	readUntilEnd(t, bufio.NewReader(res.Body))
	res.Body.Close()
	if !strings.Contains(during, "agentd_http_streams_open 1") {
		t.Errorf("an open stream is not gauged:\n%s", grep(during, "streams_open"))
	}

	// A run's attempt is counted as ended after its end is streamed (the
	// observer runs once the final commit has landed), so the scrape waits
	// for the slow run's count first.
	var body string
	waitFor(t, "the slow run counted as ended", func() bool {
		body = scrape(t, s)
		return strings.Contains(body, `agentd_runs_ended_total{agent="slow",state="completed"} 1`)
	})
	for _, want := range []string{
		`agentd_http_requests_total{code="200",method="POST",route="/v1/agents/{agentID}/messages"} 3`,
		`agentd_run_attempts_started_total{agent="assistant",resume="new"} 2`,
		`agentd_runs_ended_total{agent="assistant",state="completed"} 1`,
		`agentd_runs_ended_total{agent="assistant",state="` + failed.Status + `"} 1`,
		`agentd_runs_ended_total{agent="slow",state="completed"} 1`,
		`agentd_run_duration_seconds_count{agent="assistant",state="completed"} 1`,
		`agentd_time_to_first_token_seconds_count{agent="slow"} 1`,
		`agentd_gen_ai_tokens_total{model="demo-model",type="input"}`,
		`agentd_gen_ai_tokens_total{model="demo-model",type="output"}`,
		`agentd_tool_calls_total{tool="clock"} 1`,
		`agentd_tool_calls_total{tool="calculator"}`,
		`agentd_tool_errors_total{tool="calculator"}`,
		`agentd_http_streams_open 0`,
		`agentd_eventlog_flush_events_count`,
		`agentd_eventlog_flush_seconds_bucket`,
		`agentd_lease_renewals_total{outcome="ok"}`,
		`agentd_lease_takeovers_total 0`,
		`agentd_webhook_retries_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in the scrape; related lines:\n%s", want, grep(body, strings.SplitN(want, "{", 2)[0]))
		}
	}
	if strings.Contains(body, `tool_errors_total{tool="clock"}`) {
		t.Errorf("the clock's call counted as an error")
	}
}

// TestMetricsListener: server.metrics_addr serves /metrics on a listener
// of its own, and the main listener, not configured for it, does not.
func TestMetricsListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a free port for the server's own listener
	s := startWithEnv(t, nil, "--config", writeYAML(t, assistantYAML+"server:\n  metrics_addr: "+addr+"\n"))
	if res := s.get(t, "/metrics"); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the main listener: %d, want 404", res.StatusCode)
	}
	res, err := s.client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), "agentd_lease_takeovers_total") {
		t.Fatalf("GET /metrics on metrics_addr: %d\n%s", res.StatusCode, b)
	}
}

func scrape(t *testing.T, s *server) string {
	t.Helper()
	res := s.get(t, "/metrics")
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return string(b)
}

// grep returns the lines of text that contain s.
func grep(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
