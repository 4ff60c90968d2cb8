package server

import (
	"context"
	"net/url"
	"strings"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cursus-dev/cursus"
)

// TracingEnabled reports whether traces should be exported: an OTLP
// endpoint is configured (telemetry.otlp_endpoint or the standard
// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or
// OTEL_TRACES_EXPORTER=otlp for the SDK default), and
// OTEL_TRACES_EXPORTER / OTEL_SDK_DISABLED do not turn them off.
func TracingEnabled(cfg TelemetryConfig, lookup func(string) (string, bool)) bool {
	if v, _ := lookup("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return false
	}
	exporter, _ := lookup("OTEL_TRACES_EXPORTER")
	switch strings.ToLower(strings.TrimSpace(exporter)) {
	case "none":
		return false
	case "otlp":
		return true
	}
	if cfg.OTLPEndpoint != "" {
		return true
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// SetupTracing builds the OTLP/HTTP tracer provider, or returns nil when
// tracing is off. The exporter reads the other OTEL_* variables itself
// (headers, timeout, compression, TLS); telemetry.otlp_endpoint and
// telemetry.otlp_headers take precedence over them. Call shutdown on exit
// to flush the last spans.
func SetupTracing(ctx context.Context, cfg TelemetryConfig, lookup func(string) (string, bool)) (tp *sdktrace.TracerProvider, shutdown func(context.Context) error, err error) {
	if !TracingEnabled(cfg, lookup) {
		return nil, func(context.Context) error { return nil }, nil
	}
	var opts []otlptracehttp.Option
	if cfg.OTLPEndpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(tracesURL(cfg.OTLPEndpoint)))
	}
	if len(cfg.OTLPHeaders) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.OTLPHeaders))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, err
	}
	name := cfg.ServiceName
	if v, ok := lookup("OTEL_SERVICE_NAME"); ok && v != "" {
		name = v
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", name),
		attribute.String("service.version", cursus.Version),
	))
	if err != nil {
		return nil, nil, err
	}
	tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// tracesURL treats a bare endpoint like OTEL_EXPORTER_OTLP_ENDPOINT does:
// the signal path /v1/traces is appended unless a path is given.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

// LogOTelErrors sends the OpenTelemetry SDK's errors (an exporter that
// cannot reach its endpoint, a full span queue) to log as warnings: the
// SDK's default prints plain text into the JSON log stream. The handler
// is process-wide.
func LogOTelErrors(log zerolog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn().Err(err).Msg("opentelemetry")
	}))
}
