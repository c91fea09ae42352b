// Package telemetry is how an operator watches agentd: OpenTelemetry
// traces, Prometheus metrics and trace-carrying logs.
//
// Traces are on when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, and are then exported over
// OTLP/HTTP; otherwise nothing is installed and a request or a run pays
// nothing for them (no tracer is called). A traced request has an HTTP
// server span (otelhttp; W3C traceparent in), and a run has a tree:
//
//	POST /v1/agents/{agentID}/messages        HTTP server span
//	└── run <agent>                           the run's creation; its context is stored with the task
//	    └── invoke_agent <agent>              one per attempt, on whichever replica executes it
//	        ├── chat <model>                  a model call (gen_ai.* attributes)
//	        ├── execute_tool <tool>           a tool call
//	        └── POST                          a call to a federation peer (traceparent out)
//	            └── POST /agents/{agentID}/…  the peer's server span, and its own run tree
//
// A push notification's webhook request is a client span ("webhook POST",
// traceparent out) under the run's span, read from the same metadata.
//
// Attempts read the run's trace context from the task's metadata
// ("traceparent"), so an attempt that resumes after input or after a
// failover on another replica joins the same trace.
//
// Metrics (Metrics) use prometheus/client_golang directly and are served at
// /metrics in the Prometheus text format. Runtime metrics come from the
// same observer that makes the run spans (runtime.Observer); store, flush
// and lease metrics from a store wrapper (InstrumentStore); webhook
// metrics from the push deliverer through WebhookDelivery and
// WebhookRetry.
//
// Imports: engine, errdefs, run, runtime, store. Nothing but cmd/server
// imports telemetry, except code that reports to Metrics.
package telemetry
