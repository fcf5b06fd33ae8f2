// -metrics: the relay's OpenTelemetry metrics, served in the Prometheus text format on a listener of their own.

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// metricsServer serves GET /metrics: the metrics of a meter provider, in
// the Prometheus text format (names aguistate_relay_..., see
// docs/server.md, "Metrics and traces").
type metricsServer struct {
	provider *sdkmetric.MeterProvider // set as relay.Options.MeterProvider
	srv      *http.Server
	ln       net.Listener
}

// serveMetrics listens on addr and serves there the metrics of the
// provider it returns, until close. The registry holds those metrics
// alone, without the otel_scope_* labels.
func serveMetrics(addr string) (*metricsServer, error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("-metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m := &metricsServer{
		provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)),
		srv:      &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		ln:       ln,
	}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// URL returns the address of the metrics.
func (m *metricsServer) URL() string { return "http://" + m.ln.Addr().String() + "/metrics" }

// close stops serving the metrics.
func (m *metricsServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
	_ = m.provider.Shutdown(ctx)
}
