package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultServiceName names agentd's traces unless OTEL_SERVICE_NAME does.
const DefaultServiceName = "agentd"

// tracingWanted reports whether the environment asks for traces: an OTLP
// endpoint is set, and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER
// turns them off.
func tracingWanted(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// newTracerProvider builds the SDK's tracer provider exporting over
// OTLP/HTTP to the endpoint the environment names. The exporter reads the
// other OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression,
// certificates) and the SDK the sampler's and the batch processor's
// (OTEL_TRACES_SAMPLER, OTEL_BSP_*) from the process environment itself.
func newTracerProvider(ctx context.Context, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	var opts []otlptracehttp.Option
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(u)) // used as is
	} else {
		u := strings.TrimSuffix(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = DefaultServiceName
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", name)))
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
