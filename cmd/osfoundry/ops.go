package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/osfoundry/osfoundry/handlers/inbound"
	"github.com/osfoundry/osfoundry/metrics"
)

// serveOps serves /metrics and /debug/pprof/ on loopback only, as both reveal
// internals; a rebound host name gets 421, and /debug/pprof/cmdline, which
// may hold secrets, is not served.
func serveOps(addr, publicHost string, m *metrics.Metrics, log *slog.Logger) error {
	if err := checkOpsAddr(addr); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.Handle("/debug/pprof/cmdline", http.NotFoundHandler())
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--ops-addr: %w", err)
	}
	srv := &http.Server{Handler: inbound.RequireHost(publicHost)(mux), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck
	url := "http://" + ln.Addr().String()
	log.Info("operations listener", "metrics", url+"/metrics", "profiles", url+"/debug/pprof/")
	return nil
}

// checkOpsAddr accepts loopback addresses only.
func checkOpsAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--ops-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--ops-addr %q: must be a loopback address", addr)
	}
	return nil
}
