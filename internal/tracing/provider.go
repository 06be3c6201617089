package tracing

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Exporters a process can be configured with.
const (
	ExporterNone = "none" // tracing off: no span is made, no header read or written
	ExporterOTLP = "otlp" // OTLP over HTTP/protobuf
)

// ProtocolHTTP is the one OTLP protocol hookstream's exporter speaks.
const ProtocolHTTP = "http/protobuf"

// Config says whether and how a process exports traces. The OTLP exporter and the SDK read
// the standard OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, TLS), OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_* variables themselves.
type Config struct {
	// Exporter is ExporterNone (the default when empty) or ExporterOTLP.
	Exporter string
	// Protocol is the OTLP protocol asked for (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
	// OTEL_EXPORTER_OTLP_PROTOCOL); empty or ProtocolHTTP.
	Protocol string
	// ServiceName is service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names one.
	ServiceName string
	// InstanceID is service.instance.id, when set.
	InstanceID string
	// Version is service.version, when set.
	Version string
}

// Validate reports a configuration Start cannot honour.
func (c Config) Validate() error {
	switch c.Exporter {
	case "", ExporterNone, ExporterOTLP:
	default:
		return fmt.Errorf("tracing: exporter %q: want %s or %s", c.Exporter, ExporterNone, ExporterOTLP)
	}
	if c.Exporter == ExporterOTLP && c.Protocol != "" && c.Protocol != ProtocolHTTP {
		return fmt.Errorf("tracing: OTLP protocol %q: this build exports over %s only (OTEL_EXPORTER_OTLP_PROTOCOL)", c.Protocol, ProtocolHTTP)
	}
	return nil
}

// Start builds the tracer provider of c: nil (tracing off) for ExporterNone, else an SDK
// provider exporting in batches over OTLP. shutdown flushes the spans not yet exported and
// stops the exporter; it is a no-op when tracing is off.
func Start(ctx context.Context, c Config) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	if c.Exporter == "" || c.Exporter == ExporterNone {
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: otlp exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", c.ServiceName)}
	if c.InstanceID != "" {
		attrs = append(attrs, attribute.String("service.instance.id", c.InstanceID))
	}
	if c.Version != "" {
		attrs = append(attrs, attribute.String("service.version", c.Version))
	}
	// Later options win: the environment's service name over hookstream's default.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return p, p.Shutdown, nil
}
